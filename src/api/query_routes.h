// The Prometheus HTTP query API over Vigil's store (docs/query-api.md):
//   GET|POST /api/v1/query         query, time, timeout
//   GET|POST /api/v1/query_range   query, start, end, step, timeout
//   GET|POST /api/v1/series        match[], start, end
//   GET|POST /api/v1/labels        match[], start, end
//   GET      /api/v1/label/<name>/values   match[], start, end
// Responses have Prometheus' JSON shapes; errors are
// {"status":"error","errorType":"bad_data","error":"..."} with 400 for a bad
// expression or parameter, 422 "execution" for evaluation errors and limits,
// 503 "timeout" when the query ran past its time limit.
// POST takes the same parameters form-encoded in the body.
#pragma once

#include "core/env.h"
#include "net/http_server.h"
#include "query/engine.h"
#include "store/tsdb/db.h"

namespace vigil::api {

void AddQueryRoutes(net::Router* router, tsdb::Db* db, Env* env = Env::Default());
// The same with engine limits set by the caller (tests, tuning).
void AddQueryRoutes(net::Router* router, tsdb::Db* db, const query::EngineOptions& options);

}  // namespace vigil::api
