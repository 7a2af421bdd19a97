// Tests of the engine over a real metric store: the store and its query
// engine, opened on the test's clock (its background maintenance, cutting
// chunks and applying retention, must not see today's date and drop the
// test's data).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "query/engine.h"
#include "store/tsdb/db.h"

namespace vigil::alert {

struct TestStore {
  std::unique_ptr<tsdb::Db> db;
  std::unique_ptr<query::Engine> query;

  // Opens <dir>/tsdb; a failed open fails the test.
  void Open(const std::string& dir, Env* env) {
    tsdb::Options o;
    o.dir = dir + "/tsdb";
    o.env = env;
    auto opened = tsdb::Db::Open(o);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db = std::move(opened).value();
    query = std::make_unique<query::Engine>(db.get());
  }
  void Close() {
    if (db) (void)db->Close();
  }
};

}  // namespace vigil::alert
