// VF_SPECIALIZE, read where a backend is made.
#include "runtime/specializer.h"

#include <cstdlib>
#include <cstring>

namespace vf {

SpecializeMode specialize_mode_from_env(SpecializeMode unset) {
  const char* value = std::getenv("VF_SPECIALIZE");
  if (!value || !*value) return unset;
  if (std::strcmp(value, "off") == 0) return SpecializeMode::Off;
  if (std::strcmp(value, "background") == 0) return SpecializeMode::Background;
  if (std::strcmp(value, "now") == 0) return SpecializeMode::Now;
  VF_USER_ERROR("VF_SPECIALIZE is '", value, "'; expected off, background or now");
}

}  // namespace vf
