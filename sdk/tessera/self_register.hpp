// Tessera SDK: self-registering families (header-only; the one mechanism behind the core's op
// families and every backend's kernel families).
//
// A family is a function that registers a group of ops or kernels. Each family adds itself to its
// shared object's list from a static initializer, so adding a family edits no shared file and no
// central list exists anywhere:
//
//   struct CpuKernels {};                                     // the shared object's own tag
//   using CpuFamilies = tsr::FamilyList<void (*)(tsr::Registrar&, int32_t), CpuKernels>;
//   #define TSR_CPU_KERNELS(family) TSR_FAMILY(CpuFamilies, family, (tsr::Registrar& r, int32_t device_type))
//   TSR_CPU_KERNELS(softmax) { r.kernel(...); }               // in softmax.cpp
//   ...
//   for (const auto& f : CpuFamilies::all()) f.fn(r, dt);    // in the plugin's init
//
// Ownership: entries point at string literals and functions of the shared object; nothing is
// allocated per entry beyond the list itself, which lives until the shared object is unloaded.
// Order: all() returns the families sorted by name (then file), never in link or static-
// initialization order, so registration is the same on every build.
// Thread-safety: add() runs during static initialization (one thread); all() may be called from
// any thread after that.
// `Owner` must be a type of the shared object's own: function-local statics of a template are
// unique per mangled name across a process on ELF (STB_GNU_UNIQUE), so two plugins that used the
// same Owner would share one list.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

namespace tsr {

template <class Fn, class Owner>
class FamilyList {
 public:
  struct Entry {
    const char* name;  // the family's name as written in the macro
    Fn fn;
    const char* file;  // where the family is defined (__FILE__), for tools and error messages
    int line;
  };

  // Called by TSR_FAMILY's static initializer; always returns true.
  static bool add(const char* name, Fn fn, const char* file, int line) {
    entries().push_back(Entry{name, fn, file, line});
    return true;
  }

  // Every family of this shared object, sorted by name.
  static const std::vector<Entry>& all() {
    static const std::vector<Entry> sorted = [] {
      std::vector<Entry> v = entries();
      std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) {
        int c = std::strcmp(a.name, b.name);
        return c != 0 ? c < 0 : std::strcmp(a.file, b.file) < 0;
      });
      return v;
    }();
    return sorted;
  }

 private:
  static std::vector<Entry>& entries() {
    static std::vector<Entry> list;  // filled by static initializers
    return list;
  }
};

}  // namespace tsr

// Defines family `family` of `List` (a tsr::FamilyList) with parameters `params` (parenthesized)
// and registers it; the body follows the macro. Family names are unique per translation unit.
#define TSR_FAMILY(List, family, params)                              \
  static void tsr_family_##family params;                             \
  [[maybe_unused]] static const bool tsr_family_registered_##family = \
      List::add(#family, tsr_family_##family, __FILE__, __LINE__);    \
  static void tsr_family_##family params
