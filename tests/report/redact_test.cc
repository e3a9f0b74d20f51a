#include "kernodeck/report/redact.h"

#include <gtest/gtest.h>

using namespace kernodeck::report;

TEST(Redact, SecretNames) {
  for (const char* n : {"AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "DB_PASSWORD", "API_KEY", "GITHUB_PAT", "PIP_AUTH",
                        "private_key", "OPENAI_API_KEY"})
    EXPECT_TRUE(isSecretName(n)) << n;
  for (const char* n :
       {"PATH", "GIT_AUTHOR_NAME", "KEYBOARD", "CUDA_VERSION", "NVIDIA_VISIBLE_DEVICES", "TOKENIZERS_PARALLELISM"})
    EXPECT_FALSE(isSecretName(n)) << n;
}

TEST(Redact, TokenShapesAreRedactedEverywhere) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"https://user:s3cr3t@pypi.example.com/simple", "https://***@pypi.example.com/simple"},
      {"token hf_abcdefghijklmnopqrstuvwx in text", "token *** in text"},
      {"ghp_0123456789abcdefghijABCDEFGHIJ", "***"},
      {"key AKIAIOSFODNN7EXAMPLE", "key ***"},
      {"Authorization: Bearer abc.def.ghi", "Authorization: ***"},
      {"plain text stays", "plain text stays"},
      {"https://pypi.org/simple", "https://pypi.org/simple"},
  };
  for (const auto& c : cases) EXPECT_EQ(redactText(c.in), c.out) << c.in;
}

TEST(Redact, LooksLikeSecret) {
  EXPECT_TRUE(looksLikeSecret("https://u:p@host/"));
  EXPECT_TRUE(looksLikeSecret("hf_abcdefghijklmnopqrstuvwxyz"));
  EXPECT_FALSE(looksLikeSecret("/usr/local/cuda/bin"));
  EXPECT_FALSE(looksLikeSecret("12.1.0"));
}
