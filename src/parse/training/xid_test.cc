#include "parse/training/xid.h"

#include <gtest/gtest.h>

#include <string>

namespace vigil::parse::training {
namespace {

TEST(XidTableTest, DocumentedCodesHaveBothLanguages) {
  for (int code : {13, 31, 32,  43,  45,  48,  61,  62,  63,  64,  68,  69,  74,  79,  92,
                   94, 95, 109, 119, 120, 121, 140, 143, 144, 145, 146, 147, 148, 149, 150}) {
    const XidInfo* info = LookupXid(code);
    ASSERT_NE(info, nullptr) << code;
    EXPECT_EQ(info->code, code);
    EXPECT_GT(std::string(info->meaning_en).size(), 5u) << code;
    EXPECT_GT(std::string(info->meaning_zh).size(), 5u) << code;
    EXPECT_GT(std::string(info->action_en).size(), 5u) << code;
    EXPECT_GT(std::string(info->action_zh).size(), 5u) << code;
  }
  EXPECT_STREQ(LookupXid(79)->meaning_en, "GPU has fallen off the bus");
}

TEST(XidTableTest, UnknownCodeGetsGenericText) {
  EXPECT_EQ(LookupXid(9999), nullptr);
  EXPECT_EQ(LookupXid(0), nullptr);
  const XidInfo& generic = DescribeXid(9999);
  EXPECT_EQ(generic.code, 0);
  EXPECT_NE(std::string(generic.action_en).find("Xid Errors"), std::string::npos);
  EXPECT_EQ(DescribeXid(48).code, 48);
}

TEST(ParseXidLineTest, DmesgWithPciPidAndName) {
  auto x = ParseXidLine(
      "[12345.678901] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off "
      "the bus.");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->code, 79);
  EXPECT_EQ(x->pci, "0000:3b:00");
  EXPECT_EQ(x->pid, 1234);
  EXPECT_EQ(x->process, "python");
  EXPECT_EQ(x->message, "GPU has fallen off the bus.");
}

TEST(ParseXidLineTest, WithoutPciPrefixAndKmsgHeader) {
  auto x = ParseXidLine("6,1234,5678,-;NVRM: Xid (0000:3b:00): 48, pid=99, name=train, DBE.");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->code, 48);
  EXPECT_EQ(x->pci, "0000:3b:00");
  EXPECT_EQ(x->pid, 99);
  EXPECT_EQ(x->process, "train");
  EXPECT_EQ(x->message, "DBE.");
}

TEST(ParseXidLineTest, UnknownPidAndNoNameField) {
  auto x = ParseXidLine(
      "NVRM: Xid (PCI:0000:10:1c): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
      "marked for remapping, reset gpu to activate.");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->code, 63);
  EXPECT_FALSE(x->pid);
  EXPECT_EQ(x->process, "");
  EXPECT_EQ(x->message, "Row Remapper: New row marked for remapping, reset gpu to activate.");

  x = ParseXidLine(
      "Nov 30 06:00:01 host kernel: NVRM: Xid (PCI:0000:af:00): 13, Graphics SM "
      "Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->code, 13);
  EXPECT_FALSE(x->pid);
  EXPECT_EQ(x->message, "Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address");

  x = ParseXidLine("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row.");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->pid, 1896);
  EXPECT_EQ(x->process, "");
  EXPECT_EQ(x->message, "Row Remapper: New row.");
}

TEST(ParseXidLineTest, RejectsLinesWithoutAnXid) {
  EXPECT_FALSE(ParseXidLine(""));
  EXPECT_FALSE(ParseXidLine("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus."));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:3b:00): abc"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:3b:00"));
  EXPECT_FALSE(ParseXidLine("NVRM: Xid (PCI:0000:3b:00) 79"));
}

}  // namespace
}  // namespace vigil::parse::training
