// tileops: the library's command-line tool.
#include <CLI/CLI.hpp>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"TileOPs: manifest-driven LLM operators"};
  app.require_subcommand(1);

  std::vector<std::string> files;
  CLI::App* validate = app.add_subcommand("validate", "Check the manifest (the embedded one, or the given files)");
  validate->add_option("files", files, "family YAML files to validate instead of the embedded manifest");

  app.add_subcommand("list", "List the ops of the manifest");

  CLI11_PARSE(app, argc, argv);
  try {
    if (validate->parsed()) return tileops::cli::run_validate(files);
    return tileops::cli::run_list();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tileops: %s\n", e.what());
    return 2;
  }
}
