// What the process assembly (process_assembly.h) lends the controller and node assemblies: the
// loop, the clock every loop component reads, the state database and the store thread that owns
// its connection. All of them outlive both assemblies. Loop thread only.
#pragma once

#include "loop/clock.h"
#include "loop/event_loop.h"
#include "store/group_commit.h"
#include "store/state_db.h"

namespace oxide {

struct LoopServices {
  EventLoop* loop;
  Clock* clock;
  store::StateDb* db;
  store::GroupCommit* commit;
};

}  // namespace oxide
