// Thread-local state read on every op call.
//
// libtessera is a shared object built with -fPIC, so an ordinary thread_local access is a call
// to __tls_get_addr (plus, for one of class type, a guard check and a wrapper call): measured as
// 5-6% of a recorded 1-element add, about ten calls per op (grad mode read and set around the
// kernel, the node pool, the free queue, the node sequence, the current stream).
//
// - TSR_TLS_HOT is `__thread`: for constant-initialized scalars and pointers, no guard and no
//   wrapper. Objects with constructors stay `thread_local`, reached off the hot path (their
//   owner is created on a thread's first use).
// - The core is compiled with TLS descriptors (-mtls-dialect=gnu2, core/CMakeLists.txt): where
//   libtessera was loaded with its host, an access is a call to a resolver that returns a
//   constant offset, preserving every register.
// - Not the initial-exec model: it would put all of libtessera's thread-local storage (3 KiB)
//   in the static TLS block, and a core loaded with dlopen (the Python and Node bindings, a C
//   host through TESSERA_CORE) then fails to load ("cannot allocate memory in static TLS
//   block"): glibc keeps only a few hundred bytes for that.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define TSR_TLS_HOT __thread
#else
#define TSR_TLS_HOT thread_local
#endif

// Per-thread pools of freed objects (recorded nodes, tensor blocks) are off in sanitizer
// builds, so that a use after free is still caught there.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TSR_NO_OBJECT_POOLS 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TSR_NO_OBJECT_POOLS 1
#endif
#ifdef TSR_NO_OBJECT_POOLS
#define TSR_OBJECT_POOLS 0
#else
#define TSR_OBJECT_POOLS 1
#endif
