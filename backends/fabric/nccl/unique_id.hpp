// Handing NCCL's unique id from rank 0 to the other processes of a group, through the group's
// rendezvous (the only host exchange NCCL needs: everything after it goes through NCCL):
//   file:///dir      rank 0 writes dir/tessera-nccl-<key> atomically (a temporary file, then
//                    rename), the others poll until it exists. The directory must be fresh
//                    for each job (tessera launch makes a private one): an id left there by an
//                    earlier job would be read as this one's.
//   tcp://host:port  the store rank 0 serves (../tcp_store.hpp), key tessera-nccl/<key>.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace fabric {

// Rank 0 (publish = true) publishes `id`; the others wait up to timeout_s for it and get it in
// `id` (same size). `keep` receives what must live as long as the group (rank 0's tcp:// server,
// which serves the others' requests). Throws Failure: UNAVAILABLE (no such directory, nobody
// serves the address), DEADLINE_EXCEEDED (the id did not appear in time), INVALID_ARGUMENT (a
// malformed rendezvous).
void share_unique_id(const std::string& rendezvous, const std::string& key, bool publish, double timeout_s,
                     std::vector<char>* id, std::shared_ptr<void>* keep);

}  // namespace fabric
