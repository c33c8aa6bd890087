#pragma once
// A fault the localisation (suite/locate) named, as the report keeps it: shared by --verbs-mode
// locate (its tests are verbs task ids) and --collective-mode locate (indices of its group tests).
#include <string>
#include <vector>

#include "core/json_optional.hpp"

namespace fabricproof {

struct LocatedFault {
  std::string kind;                // node, port, link, leaf (suite/locate)
  std::string summary;             // "node17: slow with every partner on all 8 rails, 0.68 of the typical pair, 40 test(s)"
  std::vector<std::string> hosts;  // the node, or the link's two ends
  std::string device;              // the rail's HCA on the (first) host, for a port, a link or a leaf
  int leaf = -1;
  double ratio = 0;                // against the typical test; 0: no test with it completed
  std::vector<int> implicating;    // the tests that named it
  std::vector<int> clearing;       // those that cleared its partners (or, for a leaf, its nodes among themselves)
};
FABRICPROOF_JSON(LocatedFault, kind, summary, hosts, device, leaf, ratio, implicating, clearing)

}  // namespace fabricproof
