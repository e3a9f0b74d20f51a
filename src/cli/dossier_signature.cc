// See dossier_signature.h. The envelope's payload is the manifest's bytes: a verifier compares
// them with the manifest it read, so a signature cannot vouch for another manifest.
#include "dossier_signature.h"

#include <sys/stat.h>

#include "kernodeck/util/safe_file.h"

namespace kernodeck::cli {

using report::Severity;

Status signDossier(const std::string& dir, const attest::Key& key) {
  KDK_TRY_ASSIGN(std::string manifest, util::readFileLimited(dir + "/MANIFEST.sha256", 16u << 20));
  KDK_TRY_ASSIGN(attest::Envelope env, attest::signEnvelope(kDossierManifestType, manifest, key));
  return util::writeBeneath(dir, kDossierSignatureFile, attest::serializeEnvelope(env) + "\n");
}

bool checkDossierSignature(const std::string& dir, const std::string& manifestText, const attest::Key& key,
                           report::Report& r) {
  std::string path = dir + "/" + kDossierSignatureFile;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    r.add("dossier.unsigned", Severity::Error,
          std::string("the dossier is not signed (no ") + kDossierSignatureFile + "), and --key asks for a signature",
          {{"path", kDossierSignatureFile}});
    return false;
  }
  auto invalid = [&](const std::string& why) {
    r.add("dossier.signature.invalid", Severity::Error, std::string(kDossierSignatureFile) + ": " + why,
          {{"path", kDossierSignatureFile}});
    return false;
  };
  if (!S_ISREG(st.st_mode)) return invalid("not a regular file");
  auto text = util::readFileLimited(path, 1u << 20);
  if (!text.ok()) return invalid(text.error().message);
  auto env = attest::parseEnvelope(*text);
  if (!env.ok()) return invalid(env.error().message);
  if (env->payloadType != kDossierManifestType)
    return invalid("signs a '" + env->payloadType + "', not a dossier manifest");
  if (Status st2 = attest::verifyEnvelope(*env, key); !st2.ok())
    return invalid(st2.error().message + " (key " + key.keyid().substr(0, 16) + ")");
  if (env->payload != manifestText)
    return invalid("the signature is over another MANIFEST.sha256: the manifest was rewritten after signing");
  r.add("dossier.signature.verified", Severity::Info, "MANIFEST.sha256 is signed by key " + key.keyid(),
        {{"path", kDossierSignatureFile}});
  return true;
}

}  // namespace kernodeck::cli
