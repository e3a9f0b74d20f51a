// The digests of one file after another (SHA-256, MD5, SHA-1 in any combination) with contexts
// made once: a layer walk hashes tens of thousands of small files, and a Hasher per file and
// algorithm (a name lookup, an implicit fetch and a context allocated and freed by OpenSSL)
// cost about as much as hashing a few hundred bytes.
#pragma once

#include <string>

namespace kernodeck::util {

class FileDigests {
 public:
  enum : unsigned { kSha256 = 1, kMd5 = 2, kSha1 = 4 };

  FileDigests();
  ~FileDigests();
  FileDigests(const FileDigests&) = delete;
  FileDigests& operator=(const FileDigests&) = delete;

  // Starts the next file with the digests named by `which` (kSha256 | kMd5 | kSha1 bits).
  void start(unsigned which);
  // Adds bytes to every digest started.
  void update(const void* data, size_t n);
  // Finishes the file: lowercase hex of each digest started, into its string (the others are
  // left as they are).
  void finish(std::string& sha256, std::string& md5, std::string& sha1);
  // Finishes the file, the raw bytes of SHA-256 (32) and MD5 (16), SHA-1 as hex; returns the
  // bits of the digests written (the others are left as they are).
  unsigned finishRaw(unsigned char (&sha256)[32], unsigned char (&md5)[16], std::string& sha1);

 private:
  struct Impl;
  Impl* impl_;
  unsigned active_ = 0;
};

}  // namespace kernodeck::util
