/* Tessera SDK: Philox4x32-10 counter-based RNG and the exact mapping used by rand/randn on
 * EVERY backend. C-compatible (C99/C11, C++, CUDA); header-only.
 *
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11):
 * 10 rounds, multipliers 0xD2511F53 / 0xCD9E8D57, Weyl key increments 0x9E3779B9 / 0xBB67AE85.
 * Known answers (checked by tests/cpu): counter {0,0,0,0}, key {0,0} ->
 * {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}.
 *
 * The rand/randn mapping (seed, offset are the op's args[3] and args[4], filled by the core):
 *   key = {lo32(seed), hi32(seed)}.
 *   "block j" = philox(counter = {lo32(j), hi32(j), 0, 0}, key): four 32-bit lanes x0..x3.
 *   Elements are numbered i = 0..numel-1 in row-major order of the (contiguous) output.
 *
 *   rand, f32/f16/bf16: element i uses lane i%4 of block offset + i/4:
 *       u = (x >> 8) * 2^-24                      in [0, 1)   (then rounded to f16/bf16)
 *       Note: rounding to f16/bf16 may produce exactly 1.0 for u close to 1.
 *   rand, f64: element i uses block offset + i/2, lanes 2*(i%2) (hi) and 2*(i%2)+1 (lo):
 *       u = (((uint64)hi << 32 | lo) >> 11) * 2^-53  in [0, 1)
 *   randn (every float dtype): block j = offset + i/4 gives four normals by Box-Muller:
 *       u1 = ((x0 >> 8) + 1) * 2^-24 in (0, 1],   u2 = (x1 >> 8) * 2^-24 in [0, 1)
 *       r = sqrt(-2 ln u1);  z0 = r cos(2 pi u2),  z1 = r sin(2 pi u2)
 *       lanes x2, x3 give z2, z3 the same way;  element i takes z_(i%4).
 *     f32/f16/bf16 compute in float (then round once); f64 computes the same uniforms in double
 *     with double log/sqrt/cos/sin. (Bit-exactness across backends is then as good as their
 *     libm; CPU and CUDA agree to a few ulp.)
 *
 *   Blocks consumed by one call (the core advances the runtime's offset by this amount):
 *       rand f32/f16/bf16 and randn (any dtype): ceil(numel / 4)
 *       rand f64:                                 ceil(numel / 2)
 *   tsr_philox_blocks_used() computes it.
 */
#ifndef TESSERA_PHILOX_H
#define TESSERA_PHILOX_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR_PHILOX_FN static inline __host__ __device__
#else
#define TSR_PHILOX_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_PHILOX_M0 0xD2511F53u
#define TSR_PHILOX_M1 0xCD9E8D57u
#define TSR_PHILOX_W0 0x9E3779B9u
#define TSR_PHILOX_W1 0xBB67AE85u

typedef struct tsr_philox4x32_t {
  uint32_t v[4];
} tsr_philox4x32_t;

TSR_PHILOX_FN void tsr_philox_round(uint32_t c[4], uint32_t k0, uint32_t k1) {
  const uint64_t p0 = (uint64_t)TSR_PHILOX_M0 * (uint64_t)c[0];
  const uint64_t p1 = (uint64_t)TSR_PHILOX_M1 * (uint64_t)c[2];
  const uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
  const uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
  const uint32_t n0 = hi1 ^ c[1] ^ k0;
  const uint32_t n2 = hi0 ^ c[3] ^ k1;
  c[0] = n0;
  c[1] = lo1;
  c[2] = n2;
  c[3] = lo0;
}

/* Philox4x32-10 of one 128-bit counter under a 64-bit key. */
TSR_PHILOX_FN tsr_philox4x32_t tsr_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2]) {
  tsr_philox4x32_t r;
  uint32_t k0 = key[0], k1 = key[1];
  int i;
  r.v[0] = ctr[0];
  r.v[1] = ctr[1];
  r.v[2] = ctr[2];
  r.v[3] = ctr[3];
  for (i = 0; i < 10; ++i) {
    if (i > 0) {
      k0 += TSR_PHILOX_W0;
      k1 += TSR_PHILOX_W1;
    }
    tsr_philox_round(r.v, k0, k1);
  }
  return r;
}

/* Block j of the stream of `seed` (counter {lo32(j), hi32(j), 0, 0}). */
TSR_PHILOX_FN tsr_philox4x32_t tsr_philox_block(uint64_t seed, uint64_t j) {
  uint32_t ctr[4];
  uint32_t key[2];
  ctr[0] = (uint32_t)j;
  ctr[1] = (uint32_t)(j >> 32);
  ctr[2] = 0;
  ctr[3] = 0;
  key[0] = (uint32_t)seed;
  key[1] = (uint32_t)(seed >> 32);
  return tsr_philox4x32_10(ctr, key);
}

/* [0, 1) with 24 random bits. */
TSR_PHILOX_FN float tsr_philox_uniform_f32(uint32_t x) { return (float)(x >> 8) * 5.9604644775390625e-08f; /* 2^-24 */ }
/* (0, 1] with 24 random bits (Box-Muller's u1: log never sees 0). */
TSR_PHILOX_FN float tsr_philox_uniform_f32_open0(uint32_t x) {
  return (float)((x >> 8) + 1u) * 5.9604644775390625e-08f;
}
/* [0, 1) with 53 random bits from two lanes. */
TSR_PHILOX_FN double tsr_philox_uniform_f64(uint32_t hi, uint32_t lo) {
  const uint64_t u = (((uint64_t)hi << 32) | (uint64_t)lo) >> 11;
  return (double)u * 1.1102230246251565404236316680908203125e-16; /* 2^-53 */
}

/* The four standard normals of one block (randn, float math). */
TSR_PHILOX_FN void tsr_philox_normal4_f32(tsr_philox4x32_t b, float z[4]) {
  const float two_pi = 6.28318530717958647692f;
  float r0 = sqrtf(-2.0f * logf(tsr_philox_uniform_f32_open0(b.v[0])));
  float t0 = two_pi * tsr_philox_uniform_f32(b.v[1]);
  float r1 = sqrtf(-2.0f * logf(tsr_philox_uniform_f32_open0(b.v[2])));
  float t1 = two_pi * tsr_philox_uniform_f32(b.v[3]);
  z[0] = r0 * cosf(t0);
  z[1] = r0 * sinf(t0);
  z[2] = r1 * cosf(t1);
  z[3] = r1 * sinf(t1);
}

/* The same four normals computed in double (randn f64). */
TSR_PHILOX_FN void tsr_philox_normal4_f64(tsr_philox4x32_t b, double z[4]) {
  const double two_pi = 6.28318530717958647692;
  const double s = 5.9604644775390625e-08; /* 2^-24 */
  double r0 = sqrt(-2.0 * log((double)((b.v[0] >> 8) + 1u) * s));
  double t0 = two_pi * ((double)(b.v[1] >> 8) * s);
  double r1 = sqrt(-2.0 * log((double)((b.v[2] >> 8) + 1u) * s));
  double t1 = two_pi * ((double)(b.v[3] >> 8) * s);
  z[0] = r0 * cos(t0);
  z[1] = r0 * sin(t0);
  z[2] = r1 * cos(t1);
  z[3] = r1 * sin(t1);
}

/* Blocks one rand/randn call consumes: ceil(numel/2) for rand f64, ceil(numel/4) otherwise. */
TSR_PHILOX_FN uint64_t tsr_philox_blocks_used(uint64_t numel, int is_randn, int is_f64) {
  if (!is_randn && is_f64) return (numel + 1u) / 2u;
  return (numel + 3u) / 4u;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_PHILOX_H */
