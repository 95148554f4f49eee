// One spelling per mutation name (issue 24). A mutation is named with '-' everywhere a name is
// given or shown ("create-before-close": `zoo --list`, `zoo --mutations`, `soak --mutation`,
// the zoo's tables, docs/ZOO.md); the program that runs it is `bug.` and the name with '_' for
// '-' (`bug.create_before_close`), as every program name is spelled. The other spelling is not
// an alias: a name given with '_', or as its program, selects nothing and the error names the
// spelling to use.
#ifndef RESTORESIM_TOOLS_RESTORESIM_MUTATION_NAMES_H_
#define RESTORESIM_TOOLS_RESTORESIM_MUTATION_NAMES_H_

#include <string>
#include <string_view>

namespace restoresim::tools {

// For a name or glob that selects no mutation: "; mutation names are spelled with '-': give
// 'create-before-close'" when the name in the mutations' spelling (without `bug.`, '_' as '-')
// selects one, "" otherwise.
std::string MutationSpellingHint(std::string_view given);

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_MUTATION_NAMES_H_
