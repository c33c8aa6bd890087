#pragma once
// NCCL, opened at run time. The binary links no NCCL: one build (and its .deb) starts on a node
// without NCCL or without a GPU, and the NCCL engine then names what is missing instead of the
// loader refusing to start the whole suite. Compiled against nccl.h, so the signatures are NCCL's own.
#include <nccl.h>

#include <string>

namespace fabricproof::collectives {

struct NcclLibrary {
  decltype(&ncclGetVersion) GetVersion;
  decltype(&ncclGetErrorString) GetErrorString;
  decltype(&ncclGetLastError) GetLastError;
  decltype(&ncclGetUniqueId) GetUniqueId;
  decltype(&ncclCommInitRankConfig) CommInitRankConfig;
  decltype(&ncclCommGetAsyncError) CommGetAsyncError;
  decltype(&ncclCommFinalize) CommFinalize;
  decltype(&ncclCommDestroy) CommDestroy;
  decltype(&ncclCommAbort) CommAbort;
  decltype(&ncclAllReduce) AllReduce;
  decltype(&ncclAllGather) AllGather;
  decltype(&ncclReduceScatter) ReduceScatter;
  decltype(&ncclBroadcast) Broadcast;
  decltype(&ncclSend) Send;
  decltype(&ncclRecv) Recv;
  decltype(&ncclGroupStart) GroupStart;
  decltype(&ncclGroupEnd) GroupEnd;
  decltype(&ncclCommSplit) CommSplit;  // optional (NCCL >= 2.18): nullptr when the library lacks it
  decltype(&ncclMemAlloc) MemAlloc;    // optional (NCCL >= 2.19), as MemFree
  decltype(&ncclMemFree) MemFree;
  std::string path;  // the file that was opened
};

// The library, loaded once: $FABRICPROOF_NCCL_LIBRARY alone when set; else libnccl.so.2 as the
// dynamic loader finds it (LD_LIBRARY_PATH, ld.so.cache), else under $NCCL_HOME/lib, else in the
// directory the build found NCCL in. A LocatedError says why when none opens or one lacks a
// function this suite calls (NCCL < 2.14).
const NcclLibrary& nccl_library();

}  // namespace fabricproof::collectives
