#include "core/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil {
namespace {

TEST(JsonWriterTest, NestedStructuresGetCommas) {
  JsonWriter w;
  w.BeginObject().Key("a").Int(1).Key("b").BeginArray().String("x").Double(1.5).Null().EndArray();
  w.Key("c").BeginObject().Key("d").Bool(true).EndObject().Key("e").Uint(7).EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":["x",1.5,null],"c":{"d":true},"e":7})");
}

TEST(JsonWriterTest, EscapesAndNeutralisesHtml) {
  std::string out;
  AppendJsonString(&out, "a\"b\\c\n</script>\x01");
  EXPECT_EQ(out, R"("a\"b\\c\n\u003c/script\u003e\u0001")");
}

TEST(JsonWriterTest, InvalidUtf8IsReplacedValidIsKept) {
  std::string out;
  AppendJsonString(&out, "ok \xe4\xb8\xad bad \xff\xc3");
  EXPECT_EQ(out, "\"ok \xe4\xb8\xad bad \\ufffd\\ufffd\"");
}

TEST(JsonWriterTest, NonFiniteIsNull) {
  JsonWriter w;
  w.BeginArray().Double(NAN).Double(INFINITY).Double(0.1).EndArray();
  EXPECT_EQ(w.str(), "[null,null,0.1]");
}

}  // namespace
}  // namespace vigil
