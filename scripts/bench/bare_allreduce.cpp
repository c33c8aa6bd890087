// The reference of scripts/bench/harness-overhead: a bare MPI_Allreduce loop, timed the way the
// sweep harness times (barrier, N calls, slowest rank's time / N), nothing else around it.
//   bare-allreduce BYTES ITERS WARMUP   -> prints "time_us <per call>" on rank 0
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: bare-allreduce BYTES ITERS WARMUP\n");
    MPI_Finalize();
    return 2;
  }
  const int count = static_cast<int>(std::strtoull(argv[1], nullptr, 10) / sizeof(float));
  const int iters = std::atoi(argv[2]), warmup = std::atoi(argv[3]);
  std::vector<float> in(static_cast<size_t>(count), 1.0f), out(static_cast<size_t>(count));
  for (int i = 0; i < warmup; ++i) MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iters; ++i) MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double seconds = MPI_Wtime() - start, slowest = 0;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("time_us %.3f\n", slowest / iters * 1e6);
  MPI_Finalize();
  return 0;
}
