// The parser and the audit on the project's own fixtures (tests/fixtures/nccl): launcher prefixes
// (srun -l, torchrun + Python logging, Open MPI tag-output), one file per rank with a mixed
// fallback, CRLF, ANSI colours, non-UTF-8 junk, glued and duplicated lines, lines out of order, a
// truncated last line, and an nccl-tests table with INFO lines inside it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <thread>

#include "facts.hpp"
#include "nccl_log/audit.hpp"
#include "nccl_log/debug_file.hpp"
#include "nccl_log/parser.hpp"
#include "paths.hpp"

namespace fabricproof {
namespace {

std::string fixture(const std::string& name) { return test::fixture("nccl/" + name).string(); }

const nccl::Connection* find(const nccl::LogFacts& f, int rank, int peer, int channel) {
  for (const auto& c : f.connections)
    if (c.rank == rank && c.peer == peer && c.channel == channel) return &c;
  return nullptr;
}

TEST(NcclFixtures, SrunTwoNodesOverInfinibandWithGpuDirect) {
  const auto f = nccl::parse_files({fixture("srun-2node-ib-gdrdma.log")});
  EXPECT_EQ(f.version, "2.21.5+cuda12.4");
  EXPECT_EQ(f.ranks, (std::set<int>{0, 1}));
  EXPECT_EQ(f.hosts, (std::set<std::string>{"gpu-a01", "gpu-a02"}));
  EXPECT_EQ(f.multi_node, true);
  EXPECT_EQ(f.nranks, 2);
  ASSERT_EQ(f.connections.size(), 8u);
  for (const auto& c : f.connections) {
    EXPECT_EQ(c.transport, "NET/IB/0/GDRDMA");
    EXPECT_EQ(c.inter_node, true);
    EXPECT_TRUE(c.direction_explicit);
  }
  const auto* recv = find(f, 0, 1, 0);
  ASSERT_TRUE(recv);
  EXPECT_EQ(f.socket_fallback, false);
  EXPECT_EQ(f.net.selected, std::vector<std::string>{"IB"});
  EXPECT_EQ(f.net.ib_devices, std::vector<std::string>{"mlx5_0:1/IB"});
  const auto findings = nccl::audit(f, {true});
  EXPECT_EQ(worst_verdict(findings), Verdict::pass);
  EXPECT_TRUE(test::with_id(findings, "nccl_gdr").empty());
  EXPECT_EQ(test::with_id(findings, "nccl_socket_fallback").at(0).verdict, Verdict::pass);
}

TEST(NcclFixtures, OneFilePerRankWithOneRankFallenBackToSockets) {
  const std::string dir = "mixed-fallback-per-rank/";
  const auto f = nccl::parse_files({fixture(dir + "nccl.node1.4101.log"), fixture(dir + "nccl.node1.4102.log"),
                                    fixture(dir + "nccl.node2.5201.log"), fixture(dir + "nccl.node2.5202.log")});
  EXPECT_EQ(f.ranks, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(f.multi_node, true);
  EXPECT_EQ(f.socket_fallback, true);
  EXPECT_EQ(find(f, 0, 1, 0)->inter_node, false) << "P2P inside node1";
  EXPECT_EQ(find(f, 1, 2, 0)->inter_node, true);
  EXPECT_EQ(find(f, 3, 0, 1)->transport, "NET/Socket/0");
  EXPECT_EQ(find(f, 3, 0, 1)->host, "node2");
  EXPECT_EQ(find(f, 3, 0, 1)->peer_host, "node1");
  EXPECT_EQ(find(f, 3, 0, 1)->file, fixture(dir + "nccl.node2.5202.log"));
  const auto findings = nccl::audit(f);
  const auto fallback = test::with_id(findings, "nccl_socket_fallback");
  ASSERT_EQ(fallback.size(), 2u) << "rank 3's sends and rank 0's receives";
  EXPECT_EQ(fallback[0].verdict, Verdict::fail);
  EXPECT_EQ(fallback[0].subject, "rank 0 (node1) <- rank 3 (node2)");
  EXPECT_EQ(fallback[1].subject, "rank 3 (node2) -> rank 0 (node1)");
  EXPECT_EQ(fallback[1].measured["channels"], nlohmann::json({0, 1}));
  const auto device = test::with_id(findings, "nccl_rdma_device");
  ASSERT_EQ(device.size(), 1u);
  EXPECT_EQ(device[0].subject, "node2");
  EXPECT_EQ(exit_code_for(worst_verdict(findings)), 1);
}

TEST(NcclFixtures, CrlfColoursJunkGluedDuplicatedAndTruncatedLines) {
  const auto f = nccl::parse_files({fixture("crlf-junk-nonutf8.log")});
  EXPECT_EQ(f.hosts, std::set<std::string>{"gpu-b07"}) << "colour codes must not leak into host names";
  EXPECT_EQ(f.ranks, (std::set<int>{0, 1}));
  ASSERT_EQ(f.connections.size(), 4u);
  const auto* dup = find(f, 0, 1, 0);
  ASSERT_TRUE(dup);
  EXPECT_EQ(dup->count, 2u);
  EXPECT_EQ(dup->line_no, 4u);
  EXPECT_EQ(dup->transport, "P2P/IPC/read") << "no trailing CR";
  ASSERT_TRUE(find(f, 1, 0, 0));
  EXPECT_EQ(find(f, 1, 0, 0)->transport, "P2P/IPC/read") << "cut where the glued header starts";
  ASSERT_TRUE(find(f, 0, 1, 1));
  EXPECT_EQ(find(f, 0, 1, 1)->line_no, 6u);
  EXPECT_FALSE(find(f, 1, 0, 2)) << "the last line has no newline: it was cut ('via P2P/I')";
  EXPECT_EQ(f.truncated_lines, 1u);
  EXPECT_EQ(f.net.ib_disabled, false);
  EXPECT_EQ(f.socket_fallback, std::nullopt) << "one host, no node count: undecidable";
}

TEST(NcclFixtures, TorchrunPrefixFqdnHostsAndLinesOutOfOrder) {
  const auto f = nccl::parse_files({fixture("torchrun-renamed-hosts-out-of-order.log")});
  EXPECT_EQ(f.version, "2.26.2+cuda12.8");
  EXPECT_EQ(f.hosts, (std::set<std::string>{"gpu-a01.cluster.example.com", "gpu-a02.cluster.example.com"}));
  EXPECT_EQ(f.ranks, (std::set<int>{0, 1}));
  ASSERT_EQ(f.connections.size(), 4u);
  for (const auto& c : f.connections) EXPECT_EQ(c.inter_node, true) << "the hosts come from lines after the connections";
  EXPECT_EQ(f.socket_fallback, false);
  ASSERT_FALSE(f.processes.empty());
  EXPECT_EQ(f.processes[0].launcher_rank, 1);
}

TEST(NcclFixtures, InitOnlyLogIsAnErrorNotAPass) {
  const auto f = nccl::parse_files({fixture("init-only-no-transport.log")});
  EXPECT_EQ(f.version, "2.18.5+cuda12.2");
  EXPECT_EQ(f.ranks, (std::set<int>{0, 1})) << "Open MPI tag-output ranks";
  EXPECT_TRUE(f.connections.empty());
  const auto findings = nccl::audit(f);
  const auto lines = test::with_id(findings, "nccl_transport_lines");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].verdict, Verdict::error);
  EXPECT_NE(lines[0].hint.find("NCCL_DEBUG=INFO"), std::string::npos);
  EXPECT_NE(lines[0].hint.find("NCCL_DEBUG_SUBSYS=INIT,NET"), std::string::npos);
  EXPECT_EQ(test::with_id(findings, "nccl_socket_fallback").at(0).verdict, Verdict::skip);
  EXPECT_EQ(exit_code_for(worst_verdict(findings)), 2);
}

// A real log of a 1-rank NCCL 2.28.3 job on an H200 (scripts/gpu-check, 2026-12-04): NCCL finds
// no IB device and picks its socket network, but a communicator of one rank connects nothing.
// Its audit once said error ("no transport lines"); it must say skip, and no socket fallback.
TEST(NcclFixtures, OneRankLogHasNoTransportToShowAndIsNoError) {
  const auto f = nccl::parse_files({fixture("h200-one-rank-2.28.3.log")});
  EXPECT_EQ(f.version, "2.28.3+cuda13.0");
  EXPECT_EQ(f.nranks, 1);
  EXPECT_TRUE(f.connections.empty());
  EXPECT_TRUE(f.net.ib_no_device);
  const auto findings = nccl::audit(f);
  const auto lines = test::with_id(findings, "nccl_transport_lines");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].verdict, Verdict::skip);
  EXPECT_NE(lines[0].hint.find("1 rank"), std::string::npos) << lines[0].hint;
  const auto socket = test::with_id(findings, "nccl_socket_fallback");
  ASSERT_EQ(socket.size(), 1u);
  EXPECT_NE(socket[0].verdict, Verdict::fail) << "one rank on one host uses no network";
  EXPECT_EQ(test::with_id(findings, "nccl_rdma_device").at(0).verdict, Verdict::warn);
  EXPECT_EQ(worst_verdict(findings), Verdict::warn);
}

// Two ranks on one H200 (scripts/gpu-check step 5, NCCL 2.28.3): NCCL refuses the communicator
// ("Duplicate GPU detected") before it connects. The audit still errs (no transport seen), but
// points at NCCL's warnings rather than at NCCL_DEBUG, and each rank's "job 0x... failed" is one.
TEST(NcclFixtures, TwoRanksOnOneGpuFailBeforeConnectingAndTheHintSaysSo) {
  const auto f = nccl::parse_files({fixture("h200-duplicate-gpu/rank-0.log"), fixture("h200-duplicate-gpu/rank-1.log")});
  EXPECT_EQ(f.nranks, 2);
  EXPECT_TRUE(f.connections.empty());
  ASSERT_EQ(f.warnings.size(), 4u);
  const auto findings = nccl::audit(f);
  const auto lines = test::with_id(findings, "nccl_transport_lines");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].verdict, Verdict::error);
  EXPECT_NE(lines[0].hint.find("failed before it connected"), std::string::npos) << lines[0].hint;
  const auto warnings = test::with_id(findings, "nccl_warning");
  ASSERT_EQ(warnings.size(), 3u) << "two 'Duplicate GPU' messages (the ranks in either order) and one 'job 0x... failed'";
  int duplicate = 0;
  for (const auto& w : warnings) {
    const std::string message = w.measured.at("message");
    if (message.find("Duplicate GPU detected") != std::string::npos) ++duplicate;
    if (message.find("ncclAsyncJobComplete") != std::string::npos) {
      EXPECT_EQ(w.measured.at("count"), 2) << message;
    }
  }
  EXPECT_EQ(duplicate, 2);
}

// nccl-tests 2.19.6's own output (scripts/gpu-check), one rank: every row, 8 B .. 1 GiB, read,
// the in-place algbw of a 1-rank no-op too, printed as "3e+06" on the H200 and "884284" on the H100.
struct AllReducePerfFixture {
  const char* path;
  double first_time_us, last_time_us, last_algbw, last_in_place_algbw;
};

TEST(NcclFixtures, RealAllReducePerfOutputFromAnH200AndAnH100) {
  const AllReducePerfFixture fixtures[] = {
      {"gpu/2026-12-04-NVIDIA-H200/all_reduce_perf.txt", 4.19, 505.62, 2123.6, 3e6},
      {"gpu/2026-12-06-NVIDIA-H100-80GB-HBM3/all_reduce_perf.txt", 6.16, 708.75, 1515.0, 884284},
  };
  for (const auto& fx : fixtures) {
    SCOPED_TRACE(fx.path);
    const auto f = nccl::parse_files({test::fixture(fx.path).string()});
    ASSERT_TRUE(f.nccl_tests);
    const auto& t = *f.nccl_tests;
    EXPECT_EQ(t.nranks, 1);
    ASSERT_EQ(t.rows.size(), 28u);
    EXPECT_EQ(t.rows_dropped, 0u);
    EXPECT_EQ(t.rows.front().size, 8u);
    EXPECT_DOUBLE_EQ(t.rows.front().out_of_place.time_us, fx.first_time_us);
    EXPECT_EQ(t.rows.back().size, 1073741824u);
    EXPECT_DOUBLE_EQ(t.rows.back().out_of_place.time_us, fx.last_time_us);
    EXPECT_DOUBLE_EQ(t.rows.back().out_of_place.algbw_GBps, fx.last_algbw);
    EXPECT_DOUBLE_EQ(t.rows.back().in_place.algbw_GBps, fx.last_in_place_algbw);
    EXPECT_EQ(t.out_of_bounds, 0);
  }
}

TEST(NcclFixtures, NcclTestsTableWithInfoLinesInside) {
  const auto f = nccl::parse_files({fixture("nccl-tests-allreduce.log")});
  ASSERT_TRUE(f.nccl_tests);
  const auto& t = *f.nccl_tests;
  EXPECT_EQ(t.nranks, 2);
  EXPECT_EQ(t.wrong_column, "#wrong");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[2].size, 1048576u);
  EXPECT_EQ(t.rows[2].redop, "sum");
  EXPECT_EQ(t.rows[2].root, -1);
  EXPECT_DOUBLE_EQ(t.rows[2].out_of_place.busbw_GBps, 18.04);
  EXPECT_EQ(t.rows[2].in_place.wrong, std::nullopt);
  EXPECT_EQ(t.rows[2].in_place.wrong_raw, "N/A");
  EXPECT_EQ(t.avg_bus_bandwidth_GBps, 6.07833);
  EXPECT_EQ(t.out_of_bounds, 0);
  EXPECT_EQ(f.ranks, (std::set<int>{0, 1}));
}

TEST(NcclParser, HandWrittenLinesOfEveryEra) {
  const auto f = nccl::parse_text(
      "h:1:2 [0] NCCL INFO Ring 00 : 3[3] -> 1[1] via P2P/IPC\n"                          // 2.3/2.4, cudaDev brackets
      "h:1:2 [0] NCCL INFO Ring 00 : 6 -> 2 [receive] via NET/IB/0\n"                      // 2.4 NET, no device ids
      "h:1:2 [0] NCCL INFO Ring 01 : 2[0] -> 3[0] via direct shared memory\n"              // 2.4 SHM
      "h:1:2 [0] NCCL INFO Channel 07/0 : 0[0] -> 15[7] [send] via NET/IBext_v8/0(7)/GDRDMA\n"  // PXN
      "h:1:2 [0] NCCL INFO CollNet 05/0 : 5 [receive] via COLLNET/SHARP/5/GDRDMA\n"
      "h:1:2 [0] NCCL INFO Channel 00/0 : 16[17000] -> 18[21000] via P2P/IPC comm 0x5609976f9470 nRanks 32\n"
      "h:1:2 [0] NCCL INFO Ring 00 : 7 -> 0 -> 1\n"                                        // GRAPH, not a connection
      "h:1:2 [0] NCCL INFO New proxy send connection 0 from local rank 0, transport 0\n"
      "h:1:2 [0] NCCL INFO Channel 15/0 : 7[c3000] -> 15[c3000] [sen\n");
  ASSERT_EQ(f.connections.size(), 6u);
  EXPECT_EQ(f.connections[1].rank, 2) << "a receive line is printed by the right-hand rank";
  EXPECT_EQ(f.connections[1].peer, 6);
  EXPECT_EQ(f.connections[2].transport_class, nccl::TransportClass::shm);
  EXPECT_EQ(f.connections[3].proxy_rank, 7);
  EXPECT_EQ(f.connections[4].peer, std::nullopt);
  EXPECT_EQ(f.connections[4].transport_class, nccl::TransportClass::collnet);
  EXPECT_EQ(f.connections[5].transport, "P2P/IPC");
}

// The fast paths (a header reused from the previous line, a repeated connection counted without a
// second parse) must give what a full parse gives: folded counts, the right process, and a header
// glued into a line that starts like the previous one still split off.
TEST(NcclParser, RepeatedLinesFoldAndGluedHeadersStillSplit) {
  const std::string a = "gpu-a:11:21 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n";
  const std::string b = "gpu-b:12:22 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n";
  const auto f = nccl::parse_text(a + a + a + b + b + "gpu-c:13:23 [2] NCCL INFO Channel 02/0 : 2[2] -> 3[3] via NET/Socket/0\n" +
                                  "gpu-a:11:21 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/IPC/readgpu-c:13:23 [2] NCCL INFO Channel 02/0 : 2[2] -> 3[3] via NET/Socket/0\n"
                                  "gpu-a:11:21 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/IPC/read\n");
  ASSERT_EQ(f.connections.size(), 3u);
  EXPECT_EQ(f.connections[0].count, 5u) << "identical lines of two processes fold into one connection";
  EXPECT_EQ(f.connections[0].host, "gpu-a");
  EXPECT_EQ(f.connections[1].host, "gpu-c");
  EXPECT_EQ(f.connections[1].count, 2u) << "the glued header after a reused one is split off (gpu-c is a known host)";
  EXPECT_EQ(f.connections[2].transport, "P2P/IPC/read");
  EXPECT_EQ(f.connections[2].count, 2u);
  EXPECT_EQ(f.processes.size(), 3u);
}

// Interleaved output of several processes: each line's header is found again in the header
// cache, and a line seen before is counted from the line cache; the result must be a full parse's.
TEST(NcclParser, InterleavedProcessesAndRepeatedLinesCountLikeAFullParse) {
  const std::string a0 = "[1,0]<stdout>:gpu-a:11:21 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n";
  const std::string b0 = "[1,1]<stdout>:gpu-a:12:22 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[0] via NET/IB/0/GDRDMA\n";
  const std::string c0 = "[1,2]<stdout>:gpu-b:13:23 [0] NCCL INFO Channel 00/0 : 2[0] -> 0[0] via NET/Socket/0\n";
  const std::string a1 = "[1,0]<stdout>:gpu-a:11:21 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/IPC\n";
  std::string text;
  for (int round = 0; round < 3; ++round) text += a0 + b0 + c0 + a1 + "junk between them\n";
  const auto f = nccl::parse_text(text);
  EXPECT_EQ(f.lines, 15u);
  EXPECT_EQ(f.info_lines, 12u);
  ASSERT_EQ(f.processes.size(), 3u);
  EXPECT_EQ(f.processes[1].host, "gpu-a");
  EXPECT_EQ(f.processes[1].launcher_rank, 1);
  EXPECT_EQ(f.processes[2].host, "gpu-b");
  ASSERT_EQ(f.connections.size(), 4u);
  for (const auto& c : f.connections) EXPECT_EQ(c.count, 3u) << c.transport;
  EXPECT_EQ(find(f, 2, 0, 0)->host, "gpu-b");
  EXPECT_EQ(find(f, 0, 1, 1)->line_no, 4u) << "the first occurrence is the one kept";
  EXPECT_EQ(f.socket_fallback, true);
}

// A line that comes again must not be skipped when it sets a value the last occurrence decides:
// NCCL_IB_DISABLE printed 0, then 1, then 0 again is 0; a process whose communicators have 8, 4,
// then 8 ranks ends with 8.
TEST(NcclParser, RepeatedLinesKeepLastWinsValues) {
  const std::string ib0 = "h:1:2 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n";
  const std::string ib1 = "h:1:2 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n";
  const std::string comm8 = "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE\n";
  const std::string comm4 = "h:1:2 [0] NCCL INFO comm 0x2 rank 0 nranks 4 cudaDev 0 busId 1b000 - Init COMPLETE\n";
  const auto f = nccl::parse_text(ib0 + comm8 + ib1 + comm4 + ib0 + comm8);
  EXPECT_EQ(f.net.ib_disabled, false);
  ASSERT_EQ(f.processes.size(), 1u);
  EXPECT_EQ(f.processes[0].nranks, 8);
  EXPECT_EQ(f.info_lines, 6u);
}

// nccl-tests rows: old builds print the error column as "0e+00"; tabs separate columns in some
// pastes; a row is cut into fields 64 bytes at a time, so a field may cross that boundary.
TEST(NcclTestsRow, ExponentsTabsAndFieldsAcross64Bytes) {
  bool partial = true;
  auto row = nccl::parse_tests_row("     1048576        262144   float     sum    213.5    4.91    9.21  1.5e-06    205.9    5.09    9.55  0e+00",
                                   true, false, &partial);
  ASSERT_TRUE(row);
  EXPECT_FALSE(partial);
  EXPECT_EQ(row->out_of_place.wrong, 1.5e-06);
  EXPECT_EQ(row->in_place.wrong, 0.0);
  EXPECT_EQ(row->in_place.wrong_raw, "0e+00");
  EXPECT_EQ(row->out_of_place.busbw_GBps, 9.21);

  // 60 blanks put "1048576" across bytes 60..66.
  row = nccl::parse_tests_row(std::string(60, ' ') + "1048576\t262144\tfloat\tsum\t-1\t213.5\t4.91\t9.21\t0\t205.9\t5.09\t9.55\t0", std::nullopt,
                              std::nullopt, &partial);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->size, 1048576u);
  EXPECT_EQ(row->redop, "sum");
  EXPECT_EQ(row->root, -1);
  EXPECT_EQ(row->in_place.busbw_GBps, 9.55);

  EXPECT_FALSE(nccl::parse_tests_row("     1048576        262144   float     sum      -1    213.5    4.91", true, true, &partial));
  EXPECT_TRUE(partial) << "a row cut short is reported as partial";

  // Fields are cut from 64-byte masks of blanks: a row shifted over every start and end of a
  // field at a 64-byte boundary, with blanks or not at its end, reads the same.
  const std::string fields = "1048576 262144 float sum -1 213.5 4.91 9.21 0 205.9 5.09 9.55 7";
  for (size_t shift = 0; shift < 80; ++shift)
    for (const std::string tail : {"", "  ", "\t"}) {
      const std::string line = std::string(shift, ' ') + fields + tail;
      row = nccl::parse_tests_row(line, true, true, &partial);
      ASSERT_TRUE(row) << line;
      EXPECT_EQ(row->size, 1048576u) << line;
      EXPECT_EQ(row->redop, "sum") << line;
      EXPECT_EQ(row->in_place.busbw_GBps, 9.55) << line;
      EXPECT_EQ(row->in_place.wrong_raw, "7") << line;
    }
}

// Rows past kMaxTestsRows are counted without reading their values: that classification must be
// the one of a full reading, for every number form (from_chars' own, out of range, not a number).
TEST(NcclTestsRow, ACountedRowHasTheStatusOfARowRead) {
  const std::string head = "     1048576        262144   float     sum      -1    ";
  const std::vector<std::string> values = {"213.5", "0", "1.", "1.5e-06", "0e+00", "2.0E3", "1234567890123456", "1e22", "1e23", "1e-40",
                                           "1e999", "1e+9999", "inf", "nan", "-1", "+1", ".5", ".", "1e", "1e+", "0x10", "12a", "N/A",
                                           "1.2.3", "1..", "..5", "12345678901234567"};
  int partial = 0, rows = 0;
  for (const auto& v : values)
    for (const auto& where : {0, 3}) {  // as a time (a number) and as #wrong (a number or N/A)
      std::vector<std::string> half = {"213.5", "4.91", "9.21", "0"};
      half[static_cast<size_t>(where)] = v;
      std::string line = head;
      for (const auto& f : half) line += f + "   ";
      line += "205.9    5.09    9.55  0";
      nccl::TestsRow row;
      const auto read = nccl::read_tests_row(line, true, true, &row);
      EXPECT_EQ(nccl::read_tests_row(line, true, true, nullptr), read) << line;
      (read == nccl::RowStatus::row ? rows : partial) += 1;
    }
  EXPECT_GT(rows, 10) << "the list holds numbers";
  EXPECT_GT(partial, 5) << "and things that are not";

  // Through the parser: past the cap, a row is counted and a row with a broken value is partial.
  std::string text = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  for (size_t i = 0; i < nccl::kMaxTestsRows + 5; ++i) text += head + "213.5    4.91    9.21      0    205.9    5.09    9.55      0\n";
  text += head + "213.5    4.91    1e999      0    205.9    5.09    9.55      0\n";
  const auto f = nccl::parse_text(text);
  ASSERT_TRUE(f.nccl_tests);
  EXPECT_EQ(f.nccl_tests->rows.size(), nccl::kMaxTestsRows);
  EXPECT_EQ(f.nccl_tests->rows_dropped, 5u);
  ASSERT_EQ(f.nccl_tests->partial_row_lines.size(), 1u);
  EXPECT_EQ(f.nccl_tests->partial_row_lines[0], nccl::kMaxTestsRows + 7);
}

// ":901:915 [0]" -> ":901:915<copy> [0]", or with `pids` too ":901<copy>:915<copy> [0]" (each copy
// then names processes of its own, whose order in the facts is the order of the file).
std::string tagged(std::string text, size_t copy, bool pids) {
  const auto tag = std::to_string(copy);
  auto digits_before = [&](size_t at) {
    while (at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]))) --at;
    return at;
  };
  for (size_t at = 0; (at = text.find(" [", at)) != std::string::npos; at += 2) {
    if (at == 0 || !std::isdigit(static_cast<unsigned char>(text[at - 1]))) continue;
    const size_t tid = digits_before(at);
    text.insert(at, tag);
    at += tag.size();
    if (pids && tid > 1 && text[tid - 1] == ':' && std::isdigit(static_cast<unsigned char>(text[tid - 2])) &&
        text[digits_before(tid - 1) - 1] == ':') {
      text.insert(tid - 1, tag);
      at += tag.size();
    }
  }
  return text;
}

// Every fixture, in copies whose thread ids differ until the file passes `bytes` (by default above
// the parallel threshold), so tables, headers and connections cross any cut.
std::string write_big_log(const std::filesystem::path& dir, uint64_t bytes = 65ull << 20, bool tag_pids = false) {
  std::string unit;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(test::fixture("nccl")))
    if (entry.path().extension() == ".log") {
      std::ifstream in(entry.path(), std::ios::binary);
      unit += std::string(std::istreambuf_iterator<char>(in), {});
      if (unit.back() != '\n') unit += '\n';  // a fixture's cut last line stays cut only at the end
    }
  // A second table after the fixture's, as older nccl-tests printed it (an "error" column): one
  // pass names the column after the last header, and so must the merge.
  unit +=
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "           8             2   float     sum    10.66    0.00    0.00  0e+00    10.45    0.00    0.00  0e+00\n";
  EXPECT_GT(unit.size(), 1000u);
  const auto path = (dir / "big.log").string();
  std::ofstream out(path, std::ios::binary);
  for (size_t copy = 0; static_cast<uint64_t>(out.tellp()) < bytes; ++copy) out << tagged(unit, copy, tag_pids);
  // The last table of the file, in today's format: its header names the column ("#wrong").
  out << "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
         "           8             2     float     sum      -1    18.21    0.00    0.00      0    17.96    0.00    0.00      0\n";
  return path;
}

nccl::LogFacts parse_in_one_pass(const std::string& path) {
  nccl::Parser one_pass;
  one_pass.begin_file(path);
  std::ifstream in(path, std::ios::binary);
  one_pass.add_stream(in);
  return one_pass.finish();
}

// A file above the parallel threshold (64 MiB) is parsed in parts on every core and merged; the
// facts must be those of one pass over the same bytes, whatever parts the cut made. The merged
// nccl-tests table once took its column name from a later table than the first.
TEST(NcclFixtures, ParallelParseOfABigFileEqualsOnePass) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: big files are parsed in one pass here";
  test::TempDir dir("parallel-parse");
  const auto path = write_big_log(dir.path());
  nccl::ParallelStats stats;
  const auto parallel = nccl::parse_files({path}, {}, nccl::ParallelPlan{}, &stats);
  const auto serial = parse_in_one_pass(path);
  ASSERT_GT(serial.lines, 500000u);
  ASSERT_FALSE(serial.connections.empty());
  ASSERT_TRUE(serial.nccl_tests);
  EXPECT_EQ(serial.nccl_tests->wrong_column, "#wrong") << "the last header's";
  EXPECT_GE(stats.parts, 2u) << "read in parts";
  const nlohmann::json a = parallel, b = serial;
  EXPECT_EQ(a, b) << "first differences: " << nlohmann::json::diff(b, a).dump().substr(0, 2000);
}

// A core whose part is done takes the unread half of another's (at a line start), and that one's
// reader stops where it was cut. Forced here on a 24 MiB log whose every copy names processes of
// its own (so that facts merged out of order differ): four threads and one part to begin with, so
// three threads start by taking from it, and all from each other while the rest is worth it (more
// than the 4 MiB a taker reads first); then three 8 MiB parts on two threads (parts wait for a
// thread; whether the one that finds none left may take from the third depends on how far apart
// the first two ended, so takes are asserted in the first plan only). Each way, the facts are one
// pass's.
TEST(NcclFixtures, PartsTakenFromAnotherPartsUnreadRestStillGiveOnePass) {
  test::TempDir dir("parallel-steal");
  const auto path = write_big_log(dir.path(), 24ull << 20, true);
  const auto one_pass = parse_in_one_pass(path);
  ASSERT_GT(one_pass.processes.size(), 1000u) << "processes of every copy";
  const nlohmann::json serial = one_pass;
  for (const auto& plan : {nccl::ParallelPlan{1ull << 20, 4, 1, 256ull << 10}, nccl::ParallelPlan{1ull << 20, 2, 3, 256ull << 10}}) {
    nccl::ParallelStats stats;
    const nlohmann::json parallel = nccl::parse_files({path}, {}, plan, &stats);
    const std::string what = std::to_string(plan.threads) + " threads, " + std::to_string(plan.parts) + " part(s) to begin with";
    if (plan.parts == 1) {
      EXPECT_GE(stats.stolen, 1u) << what << ": no part was taken (the threads after the first found nothing left to take)";
    }
    EXPECT_EQ(stats.parts, plan.parts + stats.stolen) << what;
    EXPECT_EQ(parallel, serial) << what << ", " << stats.stolen << " taken; first differences: " << nlohmann::json::diff(serial, parallel).dump().substr(0, 2000);
  }
}

// The range a reader claims blocks of: a split gives up the second half of what is unread (moved on
// by half the taker's head start), at a line start, and the reader's claims stop there.
TEST(NcclFixtures, ASharedRangeGivesUpTheSecondHalfOfItsUnreadBytesAtALineStart) {
  test::TempDir dir("shared-range");
  const auto path = (dir.path() / "lines.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 1000; ++i) out << "line " << 1000 + i << "\n";  // 10 bytes a line
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  nccl::SharedRange range(0, 10000);
  uint64_t at = 0;
  EXPECT_EQ(range.claim(1000, at), 1000u);
  EXPECT_EQ(at, 0u);
  EXPECT_FALSE(range.split(fd, 9001)) << "fewer unread bytes than asked for";
  const auto given = range.split(fd, 1000);
  ASSERT_TRUE(given);
  EXPECT_EQ(given->first, 5510u) << "the first line start after the middle of 1000..10000 (5500)";
  EXPECT_EQ(given->second, 10000u);
  EXPECT_EQ(range.end(), 5510u);
  EXPECT_EQ(range.unread(), 4510u);
  nccl::SharedRange taken(given->first, given->second);
  const auto with_head_start = taken.split(fd, 1, 1000);
  ASSERT_TRUE(with_head_start);
  EXPECT_EQ(with_head_start->first, 8260u) << "after 5510 + (4490 + 1000) / 2 = 8255";
  uint64_t claimed = 0, last_end = 0;
  for (uint64_t size; (size = range.claim(4000, at)) > 0; last_end = at + size) claimed += size;
  EXPECT_EQ(claimed, 4510u) << "the reader stops at the cut";
  EXPECT_EQ(last_end, 5510u) << "its last block ends there";
  EXPECT_FALSE(range.split(fd, 1)) << "nothing left to give";
  ::close(fd);
}

// Where a glued header starts is decided with the hosts named so far: a part of a file that begins
// at the glued line cuts it elsewhere (its host "readgpu-b07"), says it looked for a host the part
// before it named, and read again from those hosts gives what one pass gives.
TEST(NcclFixtures, APartReadAgainFromTheHostsBeforeItCutsAGluedHeaderAsOnePass) {
  const std::string clean = "gpu-b07:901:915 [0] NCCL INFO Channel 00 : 0[1b000] -> 1[1c000] via P2P/IPC/read";
  const std::string glued =
      "gpu-b07:902:916 [1] NCCL INFO Channel 00 : 1[1c000] -> 0[1b000] via P2P/IPC/readgpu-b07:901:915 [0] NCCL INFO Channel 01 : 0[1b000] -> 1[1c000] via P2P/IPC/read";
  auto parse = [](const std::vector<std::string>& lines, const nccl::KnownHosts* hosts_before) {
    nccl::Parser p;
    p.begin_file("log");
    if (hosts_before) p.assume_line_start_hosts(*hosts_before);
    for (const auto& l : lines) p.add_line(l);
    return p;
  };
  auto one_pass = parse({clean, glued}, nullptr).finish();
  auto first = parse({clean}, nullptr);
  auto alone = parse({glued}, nullptr);
  EXPECT_EQ(alone.finish().hosts, (std::set<std::string>{"gpu-b07", "readgpu-b07"})) << "cut without the host before it";
  ASSERT_TRUE(parse({glued}, nullptr).looked_for_any_of(first.line_start_hosts()));
  auto again = parse({glued}, &first.line_start_hosts());
  EXPECT_FALSE(parse({clean}, nullptr).looked_for_any_of(first.line_start_hosts())) << "a part without glued headers is not read again";
  first.merge(std::move(again));
  const auto merged = first.finish();
  EXPECT_EQ(merged.hosts, (std::set<std::string>{"gpu-b07"}));
  EXPECT_EQ(nlohmann::json(merged), nlohmann::json(one_pass));
}

// A glued header whose name no known tail shortens is cut the same whether its whole name is known
// or not: the part that meets it before its own clean header names that host is not read again
// (the case of a log file without a final newline followed by another in one file).
TEST(NcclFixtures, AGluedHeaderCutTheSameEitherWayDoesNotMakeAPartBeReadAgain) {
  const std::string clean = "[1,0]<stdout>:gpu-c03:1201:1201 [0] NCCL INFO NET/Plugin : No plugin found";
  const std::string glued =
      "gpu-b07:902:916 [1] NCCL INFO Channel 02 : 1[1c000] -> 0[1b000] via P2P/I[1,0]<stdout>:gpu-c03:1201:1201 [0] NCCL INFO Bootstrap : Using ib0";
  auto parse = [](const std::vector<std::string>& lines) {
    nccl::Parser p;
    p.begin_file("log");
    for (const auto& l : lines) p.add_line(l);
    return p;
  };
  auto first = parse({clean});
  ASSERT_EQ(first.line_start_hosts(), (nccl::KnownHosts{"gpu-c03"}));
  auto second = parse({glued});
  EXPECT_FALSE(second.looked_for_any_of(first.line_start_hosts()));
  first.merge(std::move(second));
  EXPECT_EQ(nlohmann::json(first.finish()), nlohmann::json(parse({clean, glued}).finish())) << "as one pass";
}

// A host first met in a header that does not start its line (after another message) is named for
// cutting glued headers by the first header of its process that does start one.
TEST(NcclFixtures, AHostIsNamedByTheFirstHeaderThatStartsALine) {
  const auto f = nccl::parse_text(
      "host-a:1:1 [0] NCCL INFO Connected all rings host-b:2:2 [1] NCCL INFO Connected all trees\n"
      "host-b:2:2 [1] NCCL INFO Connected all rings\n"
      "host-a:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC/readhost-b:2:3 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via P2P/IPC/read\n");
  EXPECT_EQ(f.hosts, (std::set<std::string>{"host-a", "host-b"}));
  ASSERT_EQ(f.connections.size(), 2u);
  EXPECT_EQ(f.connections[0].transport, "P2P/IPC/read") << "the glued header cut after the transport";
}

}  // namespace
}  // namespace fabricproof

// NCCL_DEBUG_FILE as NCCL expands it (src/debug.cc): the host name cut at the first '.', with
// '%' and '/' replaced; a FQDN host would otherwise make the audit look for a file NCCL never wrote.
TEST(NcclDebugFile, ExpandsLikeNccl) {
  using fabricproof::nccl::expand_debug_file_name;
  EXPECT_EQ(expand_debug_file_name("/tmp/nccl.%h.%p.log", "gpu-a01.cluster.example.com", 4711), "/tmp/nccl.gpu-a01.4711.log");
  EXPECT_EQ(expand_debug_file_name("/x/%h-%h.log", "odd%name/x.y", 1), "/x/odd-name-x-odd-name-x.log");
  EXPECT_EQ(expand_debug_file_name("/x/100%%-%q-%p", "h", 7), "/x/100%-%q-7") << "%% is a percent sign; unknown %q stays";
  EXPECT_EQ(expand_debug_file_name("/x/end%", "h", 7), "/x/end%");
  EXPECT_EQ(expand_debug_file_name("plain.log", "h.d", 7), "plain.log");
}
