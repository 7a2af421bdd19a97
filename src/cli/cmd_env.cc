// `vigil env`: the dispatch of its subcommands, and `vigil env matrix`.
#include "cli/cmd_env.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "cli/cmd_env_lock.h"
#include "cli/commands.h"
#include "core/json_writer.h"
#include "env/matrix.h"
#include "env/matrix_query.h"

namespace vigil::cli {
namespace {

struct MatrixFlags {
  bool json = false;
  std::string table;        // only this table
  std::string matrix_file;  // update file applied over the built-in matrix
};

// Returns an exit code to stop with (help or a usage error), or -1 to go on.
int ParseMatrixFlags(const std::vector<std::string>& args, MatrixFlags* flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    auto value = [&](std::string_view name, std::string* out) {
      if (a == name && i + 1 < args.size()) {
        *out = args[++i];
        return true;
      }
      if (a.size() > name.size() + 1 && a.substr(0, name.size()) == name && a[name.size()] == '=') {
        *out = std::string(a.substr(name.size() + 1));
        return true;
      }
      return false;
    };
    if (a == "--json") {
      flags->json = true;
    } else if (value("--table", &flags->table) || value("--matrix", &flags->matrix_file)) {
    } else if (a == "-h" || a == "--help") {
      std::printf(
          "Usage: vigil env matrix [--json] [--table NAME] [--matrix FILE]\n"
          "Print the GPU software compatibility matrix Vigil checks against, with the\n"
          "public source of every row (docs/env-matrix.md).\n"
          "  --json          one JSON object: tables, rows, sources and rules\n"
          "  --table NAME    only this table\n"
          "  --matrix FILE   apply an update file (same format as the built-in data)\n");
      return 0;
    } else {
      std::fprintf(stderr, "vigil env matrix: unknown argument \"%s\" (see --help)\n",
                   args[i].c_str());
      return 2;
    }
  }
  return -1;
}

bool Wanted(const MatrixFlags& flags, std::string_view table) {
  return flags.table.empty() || flags.table == table;
}

std::string MatrixJson(const env::Matrix& m, const MatrixFlags& flags) {
  JsonWriter w;
  w.BeginObject().Key("tables").BeginArray();
  for (const env::TableSpec& spec : env::TableSpecs()) {
    if (!Wanted(flags, spec.name)) continue;
    w.BeginObject().Key("name").String(spec.name).Key("title").String(spec.title);
    w.Key("columns").BeginArray();
    for (std::string_view c : spec.columns) w.String(c);
    w.EndArray().Key("rows").BeginArray();
    for (const env::Row& row : m.rows()) {
      if (row.table != spec.name) continue;
      w.BeginObject();
      for (size_t i = 0; i < spec.columns.size(); ++i) {
        w.Key(spec.columns[i]);
        row.fields[i].empty() ? w.Null() : w.String(row.fields[i]);
      }
      w.Key("source").String(row.source).EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray().Key("rules").BeginArray();
  for (const env::MatrixRule& r : env::MatrixRules()) {
    w.BeginObject().Key("id").String(r.id).Key("text").String(r.text);
    w.Key("source").String(r.source).EndObject();
  }
  w.EndArray().EndObject();
  return w.Release();
}

// One table as aligned columns, then the pages its rows come from: the
// sources are long and shared by many rows, so they are listed once each.
void PrintTable(const env::Matrix& m, const env::TableSpec& spec) {
  std::vector<std::vector<std::string>> lines;
  lines.emplace_back(spec.columns.begin(), spec.columns.end());
  std::vector<std::string> sources;
  for (const env::Row& row : m.rows()) {
    if (row.table != spec.name) continue;
    std::vector<std::string> cells;
    for (const std::string& f : row.fields) cells.push_back(f.empty() ? "-" : f);
    lines.push_back(std::move(cells));
    if (std::find(sources.begin(), sources.end(), row.source) == sources.end()) {
      sources.push_back(row.source);
    }
  }
  std::vector<size_t> width(spec.columns.size(), 0);
  for (const auto& cells : lines) {
    for (size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  }
  std::printf("%s (%s, %zu rows)\n", std::string(spec.title).c_str(),
              std::string(spec.name).c_str(), lines.size() - 1);
  for (const auto& cells : lines) {
    std::string out = " ";
    for (size_t i = 0; i < cells.size(); ++i) {
      out += " " + cells[i];
      if (i + 1 < cells.size()) out += std::string(width[i] - cells[i].size() + 1, ' ');
    }
    std::printf("%s\n", out.c_str());
  }
  for (const std::string& s : sources) std::printf("  source: %s\n", s.c_str());
  std::printf("\n");
}

}  // namespace

int RunEnvMatrix(const std::vector<std::string>& args) {
  MatrixFlags flags;
  if (int rc = ParseMatrixFlags(args, &flags); rc >= 0) return rc;
  const auto& specs = env::TableSpecs();
  if (!flags.table.empty() &&
      std::none_of(specs.begin(), specs.end(),
                   [&](const env::TableSpec& s) { return s.name == flags.table; })) {
    std::fprintf(stderr, "vigil env matrix: no table \"%s\"\n", flags.table.c_str());
    return 2;
  }
  Result<env::Matrix> loaded = flags.matrix_file.empty()
                                   ? Result<env::Matrix>(env::Matrix::Builtin())
                                   : env::Matrix::BuiltinWithUpdateFile(flags.matrix_file);
  if (!loaded.ok()) {
    std::fprintf(stderr, "vigil env matrix: %s\n", loaded.status().message().c_str());
    return 1;
  }
  if (flags.json) {
    std::printf("%s\n", MatrixJson(*loaded, flags).c_str());
    return 0;
  }
  for (const env::TableSpec& spec : specs) {
    if (Wanted(flags, spec.name)) PrintTable(*loaded, spec);
  }
  if (flags.table.empty()) {
    std::printf("Rules\n");
    for (const env::MatrixRule& r : env::MatrixRules()) {
      std::printf("  %s: %s\n    source: %s\n", std::string(r.id).c_str(),
                  std::string(r.text).c_str(), std::string(r.source).c_str());
    }
  }
  return 0;
}

const std::vector<EnvCommand>& EnvCommands() {
  static const std::vector<EnvCommand> kCommands = {
      {"matrix", "matrix [--json] [--table NAME] [--matrix FILE]   the compatibility matrix",
       RunEnvMatrix},
      {"lock", "lock [-o FILE] [--root DIR]   this machine's environment lock (docs/env-lock.md)",
       RunEnvLock},
  };
  return kCommands;
}

std::string EnvUsage() {
  std::string out = "Subcommands (vigil env NAME --help for each):\n";
  for (const EnvCommand& c : EnvCommands()) out += std::string("  vigil env ") + c.usage + "\n";
  return out;
}

int RunEnv(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr, "vigil env: which one?\n%s", EnvUsage().c_str());
    return 2;
  }
  for (const EnvCommand& c : EnvCommands()) {
    if (args[0] == c.name) return c.run({args.begin() + 1, args.end()});
  }
  std::fprintf(stderr, "vigil env: no subcommand \"%s\"\n%s", args[0].c_str(), EnvUsage().c_str());
  return 2;
}

}  // namespace vigil::cli
