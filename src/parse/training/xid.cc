#include "parse/training/xid.h"

#include <algorithm>
#include <iterator>

namespace vigil::parse::training {
namespace {

// Sorted by code (LookupXid binary-searches). Actions are what NVIDIA's Xid
// document recommends, shortened: restart the application when the fault is
// the application's, reset the GPU or reboot when the GPU's state is lost,
// and contact the vendor when a hardware fault repeats.
constexpr XidInfo kXids[] = {
    {8, "GPU stopped processing (channel timeout)", "GPU 停止处理（通道超时）",
     "Restart the application; if it recurs, check for a hung kernel or a driver problem.",
     "重启应用；若反复出现，检查是否有卡死的内核或驱动问题。"},
    {13, "Graphics engine exception (often an out-of-range access in a kernel)",
     "图形引擎异常（常见于内核越界访问）",
     "Usually an application bug: run it under compute-sanitizer. If several applications hit it, "
     "run DCGM diagnostics.",
     "通常是应用程序错误：用 compute-sanitizer 运行排查。若多个应用都出现，运行 DCGM 诊断。"},
    {31, "GPU memory page fault (MMU fault)", "GPU 显存页错误（MMU 故障）",
     "Usually an illegal memory access by the application: debug it (compute-sanitizer, "
     "CUDA_LAUNCH_BLOCKING=1). If it recurs across applications, run DCGM diagnostics.",
     "通常是应用非法访问显存：用 compute-sanitizer 或 CUDA_LAUNCH_BLOCKING=1 "
     "排查。若不同应用反复出现，"
     "运行 DCGM 诊断。"},
    {32, "Invalid or corrupted push buffer stream", "推送缓冲区数据流无效或损坏",
     "Often PCIe bus trouble or a driver problem: check PCIe links and the driver version; reset "
     "the GPU.",
     "常见于 PCIe 总线或驱动问题：检查 PCIe 链路和驱动版本，并重置 GPU。"},
    {38, "Driver firmware error", "驱动固件错误",
     "Reset the GPU; update the driver; contact support if it recurs.",
     "重置 GPU 并更新驱动；反复出现请联系厂商支持。"},
    {43, "GPU stopped processing (the application's context faulted)",
     "GPU 停止处理（应用上下文出错）",
     "An application fault (often after it was killed); the GPU stays healthy. Restart the "
     "application.",
     "应用程序故障（常见于进程被杀之后），GPU 本身正常。重启应用即可。"},
    {44, "Graphics engine fault during context switch", "上下文切换时图形引擎故障",
     "Restart the application; reset the GPU if it recurs.", "重启应用；反复出现则重置 GPU。"},
    {45, "Preemptive cleanup, due to previous errors", "因先前错误进行的抢占式清理",
     "Usually follows a killed application or another Xid: look at the Xid before it. Alone it "
     "needs no action.",
     "通常发生在应用被杀或其他 Xid 之后：查看之前的 Xid。单独出现时无需处理。"},
    {48, "Double-bit ECC error (uncorrectable memory error)",
     "双比特 ECC 错误（不可纠正的显存错误）",
     "Applications on this GPU must restart; reset the GPU. If it recurs, have the GPU replaced.",
     "该 GPU 上的应用需重启，并重置 GPU。若反复出现，请更换 GPU。"},
    {54, "Auxiliary power is not connected to the GPU board", "GPU 板卡辅助供电未连接",
     "Connect the GPU's auxiliary power cables.", "连接 GPU 的辅助供电线。"},
    {56, "Display engine error", "显示引擎错误", "Reset the GPU; update the driver.",
     "重置 GPU 并更新驱动。"},
    {57, "Error programming video memory interface", "显存接口编程错误",
     "Reset the GPU; if it recurs, have the GPU checked.", "重置 GPU；反复出现请检修 GPU。"},
    {58, "Unstable video memory interface detected", "检测到显存接口不稳定",
     "Reset the GPU; if it recurs, have the GPU checked.", "重置 GPU；反复出现请检修 GPU。"},
    {61, "Internal micro-controller breakpoint or warning", "内部微控制器断点或警告",
     "Reset the GPU; update the driver; contact support if it recurs.",
     "重置 GPU 并更新驱动；反复出现请联系厂商支持。"},
    {62, "Internal micro-controller halt", "内部微控制器停机",
     "Reset the GPU (or reboot); if it recurs, contact support.",
     "重置 GPU（或重启机器）；反复出现请联系厂商支持。"},
    {63, "ECC page retirement or row remapping recorded", "已记录 ECC 页退役或行重映射",
     "No immediate action; reset the GPU when convenient so the remapping takes effect.",
     "无需立即处理；方便时重置 GPU 使重映射生效。"},
    {64, "ECC page retirement or row remapping failed", "ECC 页退役或行重映射失败",
     "Reset the GPU; if it recurs, have the GPU replaced.", "重置 GPU；反复出现请更换 GPU。"},
    {68, "Video processor (NVDEC) exception", "视频处理器（NVDEC）异常",
     "Restart the application; reset the GPU if it recurs.", "重启应用；反复出现则重置 GPU。"},
    {69, "Graphics engine class error", "图形引擎类错误",
     "Restart the application; reset the GPU if it recurs.", "重启应用；反复出现则重置 GPU。"},
    {74, "NVLink error", "NVLink 错误",
     "Reset the GPU; check NVLink connections and run DCGM diagnostics; if it recurs, contact "
     "support.",
     "重置 GPU，检查 NVLink 连接并运行 DCGM 诊断；反复出现请联系厂商支持。"},
    {79, "GPU has fallen off the bus", "GPU 已从总线上掉线",
     "Reboot the node. Check power, cooling and PCIe seating; if it recurs, have the GPU "
     "replaced.",
     "重启节点。检查供电、散热和 PCIe 插接；反复出现请更换 GPU。"},
    {81, "VGA subsystem error", "VGA 子系统错误", "Reset the GPU or reboot the node.",
     "重置 GPU 或重启节点。"},
    {92, "High single-bit ECC error rate", "单比特 ECC 错误率过高",
     "Keep watching; if the rate stays high, have the GPU checked.",
     "持续观察；若错误率一直偏高，请检修 GPU。"},
    {93, "Non-fatal violation of provisioned InfoROM wear limit",
     "超出 InfoROM 预设磨损上限（非致命）", "No immediate action; plan to have the GPU serviced.",
     "无需立即处理；计划检修 GPU。"},
    {94, "Contained ECC error", "已隔离的 ECC 错误",
     "Only the application that hit it is affected: restart it. Reset the GPU when convenient "
     "(row remapping).",
     "仅影响触发错误的应用：重启该应用。方便时重置 GPU（使行重映射生效）。"},
    {95, "Uncontained ECC error", "未隔离的 ECC 错误",
     "All applications on this GPU are affected: stop them and reset the GPU. If it recurs, have "
     "the GPU replaced.",
     "该 GPU 上所有应用都受影响：停止它们并重置 GPU。反复出现请更换 GPU。"},
    {109, "Context switch timeout", "上下文切换超时",
     "Restart the application; reset the GPU if it recurs.", "重启应用；反复出现则重置 GPU。"},
    {110, "Security fault error", "安全故障错误", "Reset the GPU; contact support if it recurs.",
     "重置 GPU；反复出现请联系厂商支持。"},
    {119, "GSP RPC timeout", "GSP RPC 超时",
     "Reset the GPU (or reboot); update the driver; contact support if it recurs.",
     "重置 GPU（或重启节点）并更新驱动；反复出现请联系厂商支持。"},
    {120, "GSP error", "GSP 错误",
     "Reset the GPU (or reboot); update the driver; contact support if it recurs.",
     "重置 GPU（或重启节点）并更新驱动；反复出现请联系厂商支持。"},
    {121, "C2C link corrected error", "C2C 链路已纠正错误",
     "No immediate action; if the count grows, contact support.",
     "无需立即处理；若次数持续增加，请联系厂商支持。"},
    {140, "Unrecovered ECC error", "未恢复的 ECC 错误",
     "Stop the applications on this GPU and reset it; if it recurs, have the GPU replaced.",
     "停止该 GPU 上的应用并重置 GPU；反复出现请更换 GPU。"},
    {143, "GPU initialization failure", "GPU 初始化失败",
     "Reboot the node; if it recurs, contact support.", "重启节点；反复出现请联系厂商支持。"},
    {144, "NVLink SAW error", "NVLink SAW 错误",
     "Reset the GPU; check NVLink and run DCGM diagnostics; contact support if it recurs.",
     "重置 GPU，检查 NVLink 并运行 DCGM 诊断；反复出现请联系厂商支持。"},
    {145, "NVLink RLW error", "NVLink RLW 错误",
     "Reset the GPU; check NVLink and run DCGM diagnostics; contact support if it recurs.",
     "重置 GPU，检查 NVLink 并运行 DCGM 诊断；反复出现请联系厂商支持。"},
    {146, "NVLink TLW error", "NVLink TLW 错误",
     "Reset the GPU; check NVLink and run DCGM diagnostics; contact support if it recurs.",
     "重置 GPU，检查 NVLink 并运行 DCGM 诊断；反复出现请联系厂商支持。"},
    {147, "NVLink TREX error", "NVLink TREX 错误",
     "Reset the GPU; check NVLink and run DCGM diagnostics; contact support if it recurs.",
     "重置 GPU，检查 NVLink 并运行 DCGM 诊断；反复出现请联系厂商支持。"},
    {148, "NVLink NVLPW_CTRL error", "NVLink NVLPW_CTRL 错误",
     "Reset the GPU; check NVLink and run DCGM diagnostics; contact support if it recurs.",
     "重置 GPU，检查 NVLink 并运行 DCGM 诊断；反复出现请联系厂商支持。"},
    {149, "NVLink NETIR error", "NVLink NETIR 错误",
     "Reset the GPU; check NVLink and run DCGM diagnostics; contact support if it recurs.",
     "重置 GPU，检查 NVLink 并运行 DCGM 诊断；反复出现请联系厂商支持。"},
    {150, "NVLink MSE error", "NVLink MSE 错误",
     "Reset the GPU; check NVLink and run DCGM diagnostics; contact support if it recurs.",
     "重置 GPU，检查 NVLink 并运行 DCGM 诊断；反复出现请联系厂商支持。"},
    {154, "GPU recovery action changed", "GPU 恢复操作已变更",
     "Do what the message asks (GPU reset, node reboot or drain and reset).",
     "按消息中的要求操作（重置 GPU、重启节点或排空后重置）。"},
    {155, "NVLink software-defined error", "NVLink 软件定义错误",
     "Reset the GPU; contact support if it recurs.", "重置 GPU；反复出现请联系厂商支持。"},
    {156, "Resource retirement event", "资源退役事件",
     "No immediate action; reset the GPU when convenient.", "无需立即处理；方便时重置 GPU。"},
    {157, "Resource retirement failure", "资源退役失败",
     "Reset the GPU; if it recurs, have the GPU replaced.", "重置 GPU；反复出现请更换 GPU。"},
};

constexpr XidInfo kUnknownXid = {
    0, "Xid not in Vigil's table", "Vigil 表中没有此 Xid",
    "Look the code up in NVIDIA's \"Xid Errors\" document; reset the GPU if applications fail.",
    "请在 NVIDIA《Xid Errors》文档中查找此代码；若应用失败，重置 GPU。"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void SkipSpaces(std::string_view* s) {
  while (!s->empty() && (s->front() == ' ' || s->front() == '\t')) s->remove_prefix(1);
}

// Reads a non-negative decimal (at most 18 digits) at the front of *s.
std::optional<int64_t> TakeNumber(std::string_view* s) {
  size_t n = 0;
  int64_t v = 0;
  while (n < s->size() && n < 18 && IsDigit((*s)[n])) v = v * 10 + ((*s)[n++] - '0');
  if (n == 0) return std::nullopt;
  s->remove_prefix(n);
  return v;
}

// Takes "key=value," at the front of *s (the driver's pid and name fields),
// returning the value; leaves *s alone when the key is not there.
std::optional<std::string_view> TakeField(std::string_view* s, std::string_view key) {
  if (!s->starts_with(key)) return std::nullopt;
  std::string_view rest = s->substr(key.size());
  size_t comma = rest.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  std::string_view value = rest.substr(0, comma);
  rest.remove_prefix(comma + 1);
  SkipSpaces(&rest);
  *s = rest;
  return value;
}

std::string_view TrimEnd(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

const XidInfo* LookupXid(int code) {
  auto it = std::lower_bound(std::begin(kXids), std::end(kXids), code,
                             [](const XidInfo& x, int c) { return x.code < c; });
  if (it == std::end(kXids) || it->code != code) return nullptr;
  return it;
}

const XidInfo& DescribeXid(int code) {
  const XidInfo* info = LookupXid(code);
  return info ? *info : kUnknownXid;
}

std::optional<XidEvent> ParseXidLine(std::string_view line) {
  size_t at = line.find("NVRM: Xid");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view s = line.substr(at + 9);
  SkipSpaces(&s);
  XidEvent ev;
  // "(PCI:0000:3b:00): 79, ..." or "(0000:3b:00): 79, ..."; an old form
  // has no device at all ("NVRM: Xid 79, ...").
  if (s.starts_with("(")) {
    size_t close = s.find(')');
    if (close == std::string_view::npos || close > 64) return std::nullopt;
    std::string_view dev = s.substr(1, close - 1);
    if (dev.starts_with("PCI:")) dev.remove_prefix(4);
    ev.pci.assign(dev);
    s.remove_prefix(close + 1);
    if (!s.starts_with(":")) return std::nullopt;
    s.remove_prefix(1);
    SkipSpaces(&s);
  }
  auto code = TakeNumber(&s);
  if (!code || *code > 100000) return std::nullopt;
  ev.code = static_cast<int>(*code);
  if (s.starts_with(",")) s.remove_prefix(1);
  SkipSpaces(&s);
  if (auto pid = TakeField(&s, "pid=")) {
    std::string_view p = *pid;
    if (auto v = TakeNumber(&p); v && p.empty()) ev.pid = *v;
  }
  if (auto name = TakeField(&s, "name=")) {
    if (*name != "<unknown>" && *name != "'<unknown>'") ev.process.assign(*name);
  }
  ev.message.assign(TrimEnd(s));
  return ev;
}

}  // namespace vigil::parse::training
