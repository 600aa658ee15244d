// reshape_groups: the dim groups through which a reshape's index map goes.
#include "layout/index_map.h"

namespace vf {

std::vector<ReshapeGroup> reshape_groups(const Shape& is, const Shape& os) {
  std::vector<ReshapeGroup> groups;
  size_t i = 0, j = 0;
  while (i < is.size() || j < os.size()) {
    const size_t i0 = i, j0 = j;
    int64_t pin = 1, pout = 1;
    if (i < is.size()) pin *= is[i++];
    if (j < os.size()) pout *= os[j++];
    while (pin != pout) {
      if (pin < pout) {
        VF_INTERNAL_CHECK(i < is.size(), "reshape groups of ", shape_to_string(is));
        pin *= is[i++];
      } else {
        VF_INTERNAL_CHECK(j < os.size(), "reshape groups of ", shape_to_string(os));
        pout *= os[j++];
      }
    }
    groups.push_back({i0, i, j0, j});
  }
  return groups;
}

}  // namespace vf
