// The subcommands of `vigil` and their flags: each registers its own (in
// subcommands.cc, the one translation unit besides main.cc that compiles
// CLI11) and says what runs when it is the one chosen.
#pragma once

#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace vigil::cli {

struct Subcommand {
  CLI::App* app;             // parsed: *app is true when it was chosen
  std::function<int()> run;  // returns the exit code
};

// Adds every subcommand (but `run`, which main() parses before CLI11) to `app`.
std::vector<Subcommand> AddSubcommands(CLI::App* app);

}  // namespace vigil::cli
