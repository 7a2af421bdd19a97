// The corpus test: every input under tests/data/settings/ (real command
// lines, configs and log dumps; README.md there cites each one's source) is
// read, and what is read must equal the hand-written NAME.expected beside it:
// one "key | value | source | raw_key[ | launcher]" line per setting, in
// JobSettings order, then "config-ref | path |[ raw_key]" for a command
// line's config references.
//
// Inputs by extension: .cmd is a shell command line (quotes and '\'
// continuations as a shell reads them; leading NAME=value words are its
// environment); .args is a program's arguments alone; .log is log lines;
// .yaml/.yml/.json/.toml/.py are config files.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "parse/settings/job_settings.h"

namespace vigil::parse::settings {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Words as a POSIX shell splits them (no expansion): '...' literal, "..."
// with \" \\ \$ escapes, \<newline> a continuation, \x the character.
std::vector<std::string> ShellWords(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size()) {
      if (s[i + 1] != '\n') {
        word.push_back(s[i + 1]);
        in_word = true;
      }
      ++i;
    } else if (c == '\'') {
      size_t close = s.find('\'', i + 1);
      if (close == std::string_view::npos) close = s.size();
      word.append(s.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size() &&
            (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$')) {
          ++i;
        }
        word.push_back(s[i]);
      }
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

bool EnvWord(const std::string& w) {
  size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string Render(const JobSettings& s, const std::vector<ConfigReference>& refs) {
  std::string out;
  for (const JobSetting& j : s.all()) {
    out += j.key + " | " + j.value + " | " + j.source + " | " + j.raw_key;
    if (!j.launcher.empty()) out += " | " + j.launcher;
    out += "\n";
  }
  for (const ConfigReference& r : refs) {
    out += "config-ref | " + r.path + " |";
    if (!r.raw_key.empty()) out += " " + r.raw_key;
    out += "\n";
  }
  return out;
}

std::string Expected(const std::string& text) {
  std::string out;
  for (std::string_view line : Split(text, '\n')) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    out += std::string(line) + "\n";
  }
  return out;
}

std::string ReadInput(const std::string& dir, const std::string& name) {
  std::string text = ReadAll(dir + "/" + name);
  size_t dot = name.rfind('.');
  std::string ext = name.substr(dot);
  if (ext == ".cmd" || ext == ".args") {
    std::vector<std::string> words = ShellWords(text);
    JobSettingsInput in;
    size_t i = 0;
    while (ext == ".cmd" && i < words.size() && EnvWord(words[i])) {
      size_t eq = words[i].find('=');
      in.env.emplace_back(words[i].substr(0, eq), words[i].substr(eq + 1));
      ++i;
    }
    std::vector<std::string> argv(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
    if (ext == ".args") argv.insert(argv.begin(), "train.py");
    in.argv.push_back(argv);
    return Render(ParseJobSettings(in), ConfigReferencesFromArgv(argv));
  }
  if (ext == ".log") {
    std::vector<std::string> lines;
    for (std::string_view l : Split(text, '\n')) lines.emplace_back(l);
    return Render(SettingsFromLogLines(lines), {});
  }
  Result<JobSettings> r = SettingsFromConfig({name, text});
  if (!r.ok()) return "error: " + r.status().ToString() + "\n";
  return Render(*r, {});
}

TEST(SettingsCorpus, EveryInputMatchesItsExpectation) {
  std::string dir = VIGIL_SETTINGS_CORPUS;
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) names.emplace_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  int cases = 0;
  for (const std::string& name : names) {
    size_t dot = name.rfind('.');
    if (dot == std::string::npos || name[0] == '.') continue;
    std::string stem = name.substr(0, dot), ext = name.substr(dot);
    if (ext == ".expected" || ext == ".md") continue;
    std::string expected_path = dir + "/" + stem + ".expected";
    std::string expected = ReadAll(expected_path);
    ASSERT_FALSE(expected.empty()) << name << " has no " << stem << ".expected";
    EXPECT_NE(expected.find("# source: "), std::string::npos)
        << stem << ".expected cites no source";
    EXPECT_EQ(ReadInput(dir, name), Expected(expected)) << name;
    ++cases;
  }
  EXPECT_GE(cases, 25);
}

}  // namespace
}  // namespace vigil::parse::settings
