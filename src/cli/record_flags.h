// Helpers shared by the record commands (reference, sample, dossier, resume): loading their
// documents with errors that name the file, the exit code of a document that could not be
// loaded, the verb dispatch ("kernodeck CMD ACTION") and the report's output and exit code.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernodeck/record/record.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace kernodeck::cli {

// This program's path (/proc/self/exe), for the commands that start it again; "kernodeck" when unknown.
std::string selfPath();

// Writes `r` (JSON or text) to `output` or stdout, names its first error on stderr and returns its
// exit code under `failOn` (a bad `failOn` is a usage error).
int finish(const std::string& name, const report::Report& r, bool json, const std::string& output,
           const std::string& failOn = "error");

// The exit code for a document that could not be loaded: 2 when it was read but is not what
// the command takes (not JSON, a field of the wrong type, a hostile path), 3 when it could
// not be read at all.
int documentExit(const Error& e);

// Prints "kernodeck CMD: MESSAGE" and returns the document's exit code.
int documentError(const std::string& cmd, const Error& e);

// Reads a document and parses it with `parse`; errors name the file and the field.
template <class T, class Parse>
Result<T> loadDocument(const std::string& path, Parse parse) {
  KDK_TRY_ASSIGN(nlohmann::json j, record::readJsonFile(path));
  auto doc = parse(j);
  if (!doc.ok()) return doc.error().context(path);
  return std::move(doc).value();
}

// A reference, with its relative paths resolved against the folder it lies in.
Result<record::Reference> loadReference(const std::string& path);

// "kernodeck CMD: unknown action 'VERB' (use VERBS)"; returns the usage exit code.
int usageVerb(const char* cmd, const std::string& verb, const char* verbs);

// "kernodeck CMD" alone is a usage error; "kernodeck CMD --help" prints the actions and the exit
// codes (`exitCodes`; default: those of a command without --fail-on). -1: go on.
int verbOrHelp(const std::vector<std::string>& args, const char* cmd, const char* usage,
               const char* exitCodes = nullptr);

}  // namespace kernodeck::cli
