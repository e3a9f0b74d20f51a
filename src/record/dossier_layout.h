// Where a dossier keeps what it carries, and the path rules for fields that name places.
// Private to the record module.
#pragma once

#include <string>

#include "kernodeck/util/result.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

// A relative path with no empty, "." or ".." component: joined to a folder, it stays beneath it.
inline bool confinedPath(const std::string& p) {
  if (p.empty() || p[0] == '/') return false;
  for (const auto& part : util::split(p, '/'))
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}

// A name (of a data or weights input) usable as one path component of the dossier.
// (`[A-Za-z0-9_][A-Za-z0-9._-]{0,99}`, scanned by hand.)
inline bool plainName(const std::string& n) {
  auto word = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; };
  if (n.empty() || n.size() > 100 || !word(n[0])) return false;
  for (char c : n)
    if (!word(c) && c != '.' && c != '-') return false;
  return true;
}

// The dossier's copy of a data or weights input: a file, or a folder of its files.
inline std::string carriedInput(const std::string& kind, const std::string& name) {
  return "inputs/" + kind + "/" + name;
}

// The sha256 of a regular file inside the dossier, "" for anything else (a link planted there
// is not followed).
std::string fileSha(const std::string& path);

// Copies a regular file, or every file of a folder (each a regular file: a link is an error),
// to ROOT/REL, written beneath ROOT without following any link there (util::writeBeneath).
Status copyBeneath(const std::string& src, const std::string& root, const std::string& rel);

}  // namespace kernodeck::record
