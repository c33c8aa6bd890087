// Does a lab guest's full memory barrier order its store before its load as the host sees them?
// virtio's notification handshake rests on it: the guest publishes a buffer, barriers, and reads
// whether the device asked for a kick; the device publishes what it asks, barriers, and reads the
// guest's index. If the guest's barrier is lost, both can miss each other and the ring stalls.
//
// The test is Dekker's mutual exclusion between the guest's vCPU and a host thread, through guest
// RAM the host maps (the lab booted with FABRICPROOF_LAB_RAM_DIR):
//
//   guest: mine = 1; barrier; if (theirs == 0) { critical section } mine = 0     (host: mfence)
//
// The critical section increments a shared counter non-atomically. With both barriers real, the
// two sides are never inside together and the counter equals the sum of the entries; every
// increment lost is a time both were inside: a store passed by a later load. The guest's barrier
// is the one Linux's virtio uses on x86 (virt_mb: lock; addl $0,-4(%rsp)) or mfence.
//
//   barrier-litmus guest lock|mfence   (in the guest: prints the page's physical address, runs
//                                       until the host stops it)
//   barrier-litmus once                 (in the guest: each barrier once, for QEMU's TCG log)
//   barrier-litmus host RAMFILE PHYS SECONDS   (on the host: the other side, then the counts)
#include <fcntl.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { kReady = 0x1177, kStopped = 0x2288 };

struct page {  // each word on its own cache line
  alignas(64) volatile uint32_t guest_flag;
  alignas(64) volatile uint32_t host_flag;
  alignas(64) volatile uint64_t counter;
  alignas(64) volatile uint64_t guest_entries;
  alignas(64) volatile uint32_t guest_state;  // kReady while running, kStopped when done
  alignas(64) volatile uint32_t stop;
};

// mine = 1; barrier; return theirs. Not inlined: barrier-litmus translation finds them by name.
__attribute__((noinline)) static uint32_t announce_lock(volatile uint32_t* mine, volatile uint32_t* theirs) {
  uint32_t r;
  asm volatile("movl $1, (%1)\n\tlock; addl $0, -4(%%rsp)\n\tmovl (%2), %0"
               : "=r"(r) : "r"(mine), "r"(theirs) : "memory", "cc");
  return r;
}

__attribute__((noinline)) static uint32_t announce_mfence(volatile uint32_t* mine, volatile uint32_t* theirs) {
  uint32_t r;
  asm volatile("movl $1, (%1)\n\tmfence\n\tmovl (%2), %0"
               : "=r"(r) : "r"(mine), "r"(theirs) : "memory");
  return r;
}

static void critical_section(struct page* pg) {
  uint64_t v = pg->counter;
  for (volatile int i = 0; i < 4; ++i) {  // long enough for an overlap to lose an update
  }
  pg->counter = v + 1;
}

static uint64_t physical_address(void* p) {
  int fd = open("/proc/self/pagemap", O_RDONLY);
  uint64_t entry = 0;
  if (fd < 0 || pread(fd, &entry, sizeof entry, (off_t)((uintptr_t)p / 4096) * 8) != sizeof entry) {
    perror("barrier-litmus: /proc/self/pagemap");
    exit(1);
  }
  close(fd);
  uint64_t frame = entry & ((1ULL << 55) - 1);
  if (!(entry >> 63) || frame == 0) {
    fprintf(stderr, "barrier-litmus: the page's frame number is not readable (root needed)\n");
    exit(1);
  }
  return frame * 4096;
}

static int run_guest(const char* barrier) {
  uint32_t (*announce)(volatile uint32_t*, volatile uint32_t*) =
      strcmp(barrier, "mfence") == 0 ? announce_mfence : announce_lock;
  struct page* pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0);
  if (pg == MAP_FAILED) {
    perror("barrier-litmus: mmap");
    return 1;
  }
  memset(pg, 0, 4096);
  printf("phys 0x%" PRIx64 "\n", physical_address(pg));
  fflush(stdout);
  pg->guest_state = kReady;
  while (!pg->stop) {
    if (announce(&pg->guest_flag, &pg->host_flag) == 0) {
      critical_section(pg);
      pg->guest_entries = pg->guest_entries + 1;
    }
    pg->guest_flag = 0;
  }
  pg->guest_state = kStopped;
  return 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int run_host(const char* ram_file, uint64_t phys, double seconds) {
  int fd = open(ram_file, O_RDWR);
  if (fd < 0) {
    perror(ram_file);
    return 1;
  }
  struct page* pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)phys);
  if (pg == MAP_FAILED) {
    perror("barrier-litmus: mmap of the guest's RAM");
    return 1;
  }
  for (int waited = 0; pg->guest_state != kReady; ++waited) {
    if (waited > 100) {
      fprintf(stderr, "barrier-litmus: no guest at 0x%" PRIx64 " in %s\n", phys, ram_file);
      return 1;
    }
    usleep(100000);
  }
  uint64_t host_entries = 0;
  double end = now() + seconds;
  for (uint64_t attempt = 0;; ++attempt) {
    if ((attempt & 0xfff) == 0 && now() > end) break;
    if (announce_mfence(&pg->host_flag, &pg->guest_flag) == 0) {
      critical_section(pg);
      ++host_entries;
    }
    pg->host_flag = 0;
  }
  pg->stop = 1;
  for (int waited = 0; pg->guest_state != kStopped; ++waited) {
    if (waited > 100) {
      fprintf(stderr, "barrier-litmus: the guest did not stop\n");
      return 1;
    }
    usleep(100000);
  }
  uint64_t entries = host_entries + pg->guest_entries;
  printf("%.0f s: entries guest %" PRIu64 ", host %" PRIu64 "; counter %" PRIu64
         "; lost (both inside at once) %" PRIu64 "\n",
         seconds, pg->guest_entries, host_entries, pg->counter, entries - pg->counter);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "once") == 0) {
    uint32_t a = 0, b = 0;
    announce_lock(&a, &b);
    announce_mfence(&b, &a);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "guest") == 0) return run_guest(argv[2]);
  if (argc == 5 && strcmp(argv[1], "host") == 0)
    return run_host(argv[2], strtoull(argv[3], NULL, 0), strtod(argv[4], NULL));
  fprintf(stderr, "usage: barrier-litmus guest lock|mfence\n"
                  "       barrier-litmus once\n"
                  "       barrier-litmus host RAMFILE PHYS SECONDS\n");
  return 2;
}
