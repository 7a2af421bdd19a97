#include "core/status.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument(std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  VIGIL_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

TEST(StatusTest, OkAndErrorsCarryCodeAndMessage) {
  EXPECT_TRUE(Status::Ok().ok());
  Status st = NotFound("no such series");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.ToString(), "not found: no such series");
  EXPECT_EQ(st.WithContext("query").message(), "query: no such series");
}

TEST(StatusTest, ResultPropagatesThroughMacros) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "3 is odd");
}

TEST(StatusTest, ErrnoStatusMapsEnoentToNotFound) {
  EXPECT_EQ(ErrnoStatus("open", "/x", ENOENT).code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus("open", "/x", EACCES).code(), StatusCode::kIoError);
  EXPECT_NE(ErrnoStatus("open", "/x", EACCES).message().find("/x"), std::string::npos);
}

}  // namespace
}  // namespace vigil
