// Recognising and redacting credentials. Nothing that looks like a secret may
// reach stdout, stderr, a report or a dossier: every string a report carries
// goes through redactText, and values of secret-named variables are dropped.
#pragma once

#include <string>
#include <string_view>

namespace kernodeck::report {

// True for variable names that conventionally hold credentials
// (PASSWORD, TOKEN, SECRET, API_KEY, ACCESS_KEY, PRIVATE_KEY, CREDENTIALS, AUTH...).
bool isSecretName(std::string_view name);
// True for values shaped like a credential: URL userinfo with a password,
// Hugging Face / GitHub / Slack / AWS / OpenAI style tokens, Authorization headers, PEM keys.
bool looksLikeSecret(std::string_view value);
// Replaces every credential-shaped substring with "***", keeping the rest
// (https://user:pw@host/x becomes https://***@host/x).
std::string redactText(std::string_view text);

}  // namespace kernodeck::report
