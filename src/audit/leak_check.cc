// See leak_check.h.
#include "kernodeck/audit/leak_check.h"

#include "kernodeck/report/redact.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::audit {

using report::Severity;

void checkLeaks(const oci::FsView& view, const std::vector<python::PythonEnv>& envs,
                const std::map<std::string, std::string>& labels, report::Report& r) {
  for (const auto& e : envs)
    for (const auto& d : e.distributions) {
      if (!d.directUrl) continue;
      const std::string& url = d.directUrl->url;
      std::string where = "/" + d.metadataDir + "/direct_url.json";
      if (report::looksLikeSecret(url))
        r.add("secret.leak", Severity::Error,
              d.name + " was installed from a URL carrying a credential: " + report::redactText(url),
              {{"path", where}, {"package", d.name}});
      // An editable install whose source directory is in the image carries its code with it.
      auto code = d.codeLocation.empty() ? Result<std::string>(Error::NotFound("")) : view.resolve(d.codeLocation);
      bool codeInImage = d.directUrl->editable && code.ok() && view.info(*code).has_value();
      if (!codeInImage && (url.rfind("file://", 0) == 0 || (!url.empty() && url.front() == '/')))
        r.add("python.path.leak", Severity::Warning,
              d.name + " was installed from a build-machine path (" + report::redactText(url) +
                  "): the image cannot be rebuilt from it",
              {{"path", where}, {"package", d.name}});
    }
  std::vector<std::string> candidates = {"etc/pip.conf", "etc/xdg/pip/pip.conf", "root/.config/pip/pip.conf",
                                         "root/.pip/pip.conf", "root/.netrc"};
  for (const auto& home : view.list("home"))
    for (const char* f : {"/.config/pip/pip.conf", "/.pip/pip.conf", "/.netrc"})
      candidates.push_back("home/" + home + f);
  for (const auto& p : candidates) {
    auto t = view.readFile(p, 1 << 20);
    if (!t.ok()) continue;
    bool netrc = p.ends_with(".netrc");
    int lineNo = 0;
    for (const auto& line : util::split(*t, '\n')) {
      ++lineNo;
      std::string lower = util::toLower(line);
      bool leak =
          report::looksLikeSecret(line) || (netrc && (lower.find("password") != std::string::npos)) ||
          (!netrc && (lower.find("password") != std::string::npos || lower.find("token") != std::string::npos) &&
           line.find('=') != std::string::npos);
      if (leak)
        r.add("secret.leak", Severity::Error,
              "a credential is stored in /" + p + " (line " + std::to_string(lineNo) + ", value redacted)",
              {{"path", "/" + p}});
    }
  }
  for (const auto& [k, v] : labels)
    if (report::looksLikeSecret(v) || (report::isSecretName(k) && !v.empty()))
      r.add("secret.leak", Severity::Error, "image label " + k + " holds a credential (value redacted)",
            {{"label", k}});
}

}  // namespace kernodeck::audit
