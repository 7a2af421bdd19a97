// NVIDIA Xid errors: the kernel driver's numbered reports of GPU faults
// ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off
// the bus."). A researcher sees a crash; the Xid says whether it was their
// code (13, 31, 43), the GPU's memory (48, 63, 64, 94, 95), the bus (79) or
// the driver (119, 120), and what to do. The table follows NVIDIA's "Xid
// Errors" document; meanings and actions are short, in English and
// Simplified Chinese, for alerts and the UI.
//
// ParseXidLine reads the kernel line in the forms it reaches us: dmesg
// ("[12345.678901] NVRM: Xid ..."), syslog/journal ("Nov 30 06:00:01 host
// kernel: NVRM: Xid ..."), /dev/kmsg ("4,1234,5678,-;NVRM: Xid ...") and a
// job's own log that copied it. It is shared with the kernel log reader.
//
// Thread safety: pure functions over constant data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vigil::parse::training {

struct XidInfo {
  int code = 0;
  const char* meaning_en;
  const char* meaning_zh;
  const char* action_en;
  const char* action_zh;
};

// The documented entry for `code`, or nullptr.
const XidInfo* LookupXid(int code);
// LookupXid(code), or a generic entry (its code is 0) for codes the table
// lacks, which says where to look them up.
const XidInfo& DescribeXid(int code);

struct XidEvent {
  int code = 0;
  std::string pci;             // "0000:3b:00", without "PCI:"; may be empty
  std::optional<int64_t> pid;  // absent when the driver did not know it
  std::string process;         // "python"; empty when absent or "<unknown>"
  std::string message;         // the driver's text after the code and pid/name
};

// The Xid report in `line`, or nullopt when the line has none. Finds
// "NVRM: Xid" anywhere in the line, so any prefix (timestamp, host, kmsg
// header, worker prefix) is accepted.
std::optional<XidEvent> ParseXidLine(std::string_view line);

}  // namespace vigil::parse::training
