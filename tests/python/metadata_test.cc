#include "kernodeck/python/metadata.h"

#include <gtest/gtest.h>

#include "kernodeck/python/pins.h"
#include "kernodeck/python/torch_build.h"
#include "kernodeck/util/strings.h"

namespace python_metadata_test {

using namespace kernodeck::python;

TEST(Metadata, CoreMetadataHeadersOnly) {
  auto m = parseCoreMetadata(
      "Metadata-Version: 2.1\nName: requests\nVersion: 2.31.0\nRequires-Dist: idna<4,>=2.5\n"
      "Requires-Dist: PySocks!=1.5.7,>=1.5.6; extra == \"socks\"\nProvides-Extra: socks\nSummary: long\n  continued\n\n"
      "Requires-Dist: not-a-header-in-the-body\n");
  EXPECT_EQ(m.name, "requests");
  EXPECT_EQ(m.version, "2.31.0");
  EXPECT_EQ(m.requiresDist.size(), 2u);
  EXPECT_EQ(m.providesExtra, (std::vector<std::string>{"socks"}));
}

TEST(Metadata, RequiresTxtSections) {
  auto r = parseRequiresTxt(
      "six>=1.0\n\n[:python_version < \"3\"]\nenum34\n\n[tests]\npytest\n[ssl:sys_platform == "
      "\"win32\"]\nwincertstore\n");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0], "six>=1.0");
  EXPECT_EQ(r[1], "enum34; python_version < \"3\"");
  EXPECT_EQ(r[2], "pytest; extra == \"tests\"");
  EXPECT_EQ(r[3], "wincertstore; (sys_platform == \"win32\") and extra == \"ssl\"");
}

TEST(Metadata, RecordRows) {
  auto rows = parseRecord(
      "pip/__init__.py,sha256=ABCdef_-12,100\n\"odd,name.py\",sha256=xyz,3\npip-23.0.dist-info/RECORD,,\n"
      "bad.py,nohash,1\npadded.py,sha256=abc=,1\n");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].algorithm, "sha256");
  EXPECT_EQ(rows[0].digest, "ABCdef_-12");
  EXPECT_EQ(rows[1].path, "odd,name.py");
  EXPECT_TRUE(rows[2].algorithm.empty());
  EXPECT_TRUE(rows[3].malformed);
  EXPECT_TRUE(rows[4].malformed);
}

// Rows without a quote are split as they are (issue 31), quoted ones field by field: the same row
// written both ways gives the same fields, empty and extra ones, CRLF endings and blank lines too.
TEST(Metadata, RecordRowsQuotedOrNotAreTheSame) {
  const char* rows[] = {
      "a/b.py,sha256=ABC,12", "a/c.py,,", "x,SHA256=q,1,extra", "bin/x,md5=zz,", "y,sha256=p=,", "only", "z,=v,3",
      ",sha256=a,1"};
  std::string plain, quoted;
  for (const char* row : rows) {
    std::string q = "\"";
    for (char c : std::string(row)) q += c == ',' ? std::string("\",\"") : std::string(1, c);
    plain += std::string(row) + "\r\n\n";
    quoted += q + "\"\n  \n";
  }
  auto a = parseRecord(plain), b = parseRecord(quoted);
  ASSERT_EQ(a.size(), std::size(rows));
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].path, b[i].path) << rows[i];
    EXPECT_EQ(a[i].algorithm, b[i].algorithm) << rows[i];
    EXPECT_EQ(a[i].digest, b[i].digest) << rows[i];
    EXPECT_EQ(a[i].size, b[i].size) << rows[i];
    EXPECT_EQ(a[i].malformed, b[i].malformed) << rows[i];
  }
  EXPECT_EQ(a[0].path, "a/b.py");
  EXPECT_EQ(a[0].algorithm, "sha256");
  EXPECT_EQ(a[0].size, "12");
  EXPECT_EQ(a[2].algorithm, "sha256");
  EXPECT_TRUE(a[2].malformed);  // a fourth field
  EXPECT_TRUE(a[4].malformed);  // padded
  EXPECT_TRUE(a[6].malformed);  // no algorithm
  EXPECT_EQ(a[5].path, "only");
}

namespace {

// parseRecord as it was before RecordReader (issue 31), kept as the reference the reader must
// match row for row: a vector of owned fields a line.
std::vector<RecordRow> referenceParseRecord(std::string_view text) {
  auto fieldsOf = [](std::string_view line) {
    std::vector<std::string> f;
    std::string cur;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      char c = line[i];
      if (quoted) {
        if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          cur.push_back('"');
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          cur.push_back(c);
        }
      } else if (c == '"' && cur.empty()) {
        quoted = true;
      } else if (c == ',') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    f.push_back(cur);
    return f;
  };
  std::vector<RecordRow> rows;
  for (std::string_view line : kernodeck::util::splitView(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (kernodeck::util::trim(line).empty()) continue;
    auto f = fieldsOf(line);
    RecordRow r;
    r.path = f[0];
    if (f.size() > 1 && !f[1].empty()) {
      size_t eq = f[1].find('=');
      if (eq == std::string::npos || eq == 0) {
        r.malformed = true;
      } else {
        r.algorithm = kernodeck::util::toLower(f[1].substr(0, eq));
        r.digest = f[1].substr(eq + 1);
        if (!r.digest.empty() && r.digest.back() == '=') r.malformed = true;
      }
    }
    if (f.size() > 2) r.size = f[2];
    if (f.size() > 3) r.malformed = true;
    rows.push_back(std::move(r));
  }
  return rows;
}

void expectSameRows(const std::string& text) {
  auto want = referenceParseRecord(text);
  std::vector<RecordRow> got;
  RecordReader reader(text);
  for (RecordRowView r; reader.next(r);) {
    // A row not marked unescaped points into the text itself: no copy was made of it.
    if (!r.unescaped)
      for (std::string_view v : {r.path, r.algorithm, r.digest, r.size})
        if (!v.empty()) {
          EXPECT_TRUE(v.data() >= text.data() && v.data() + v.size() <= text.data() + text.size());
        }
    got.push_back(
        {std::string(r.path), std::string(r.algorithm), std::string(r.digest), std::string(r.size), r.malformed});
  }
  ASSERT_EQ(got.size(), want.size()) << text;
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "row " << i << " of " << testing::PrintToString(text));
    EXPECT_EQ(got[i].path, want[i].path);
    EXPECT_EQ(got[i].algorithm, want[i].algorithm);
    EXPECT_EQ(got[i].digest, want[i].digest);
    EXPECT_EQ(got[i].size, want[i].size);
    EXPECT_EQ(got[i].malformed, want[i].malformed);
  }
  EXPECT_EQ(parseRecord(text).size(), want.size());
}

}  // namespace

// RecordReader gives, as views, the rows the owned parser gave: quoted fields (commas and doubled
// quotes inside, a quote in mid-field kept as written, more than three fields), CRLF endings, a
// CR alone, blank and whitespace-only lines, rows without a hash or with an empty one, an
// uppercase algorithm, a last line without a newline.
TEST(Metadata, RecordReaderRowsAreTheOwnedParsersRows) {
  const std::string texts[] = {
      "",
      "\n\n",
      "a.py,sha256=AbC,3",
      "a.py,sha256=AbC,3\r\nb.py,sha256=x,4\r\n",
      "a.py,sha256=AbC,3\r\n\r\n  \t\r\nb.py\n",
      "\"q,uoted.py\",sha256=x,1\n\"say \"\"hi\"\".py\",\"sha256=y\",\"2\"\n",
      "mid\"quote.py,sha256=x,1\n\"\"\"\",md5=z,\n\"a\"b\"c\",,\n\"\",\"\",\"\"\n",
      "\"unterminated,sha256=x,1\nnext.py,sha256=y,2\n",
      "x,SHA256=Q,1\ny,Sha256=p=,2\n\"z\",MD5=v,3,4,5\n",
      "row-without-hash.py\nempty-hash.py,,\nno-eq.py,sha256,1\n=lead.py,=v,1\n,sha256=a,1\n",
      "a.py,sha256=x,1,\"extra,field\",more\n\"b.py\",\"SHA256=\"\"x\"\"\",\"1\",\"x\",\"y\"\n",
      "r\rinside.py,sha256=x,1\r\r\n",
      "lone-cr-line\r",
  };
  for (const auto& t : texts) expectSameRows(t);
  // The same from bytes a fuzzer might write: random rows of the characters that matter.
  std::string alphabet = "ab,=\"\r\n \tS.";
  uint32_t seed = 12345;
  for (int n = 0; n < 2000; ++n) {
    std::string t;
    for (int i = 0, len = static_cast<int>(seed % 40); i < len; ++i) {
      seed = seed * 1103515245u + 12345u;
      t += alphabet[(seed >> 16) % alphabet.size()];
    }
    seed = seed * 1103515245u + 12345u;
    expectSameRows(t);
  }
}

// The rows the checker reads, one by one, as RECORD writers write them.
TEST(Metadata, RecordReaderRowsOneByOne) {
  std::string text =
      "pkg/a.py,sha256=AbC_-,12\r\n"
      "\r\n"
      "\"pkg/odd, \"\"name\"\".py\",SHA256=xyz,3\n"
      "pkg-1.0.dist-info/RECORD,,\n"
      "pkg/nohash.py\n"
      "   \n"
      "pkg/last.py,md5=q,1";
  RecordReader reader(text);
  RecordRowView r;
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.path, "pkg/a.py");
  EXPECT_EQ(r.algorithm, "sha256");
  EXPECT_EQ(r.digest, "AbC_-");
  EXPECT_EQ(r.size, "12");  // the CR of CRLF is not part of the last field
  EXPECT_FALSE(r.malformed);
  EXPECT_FALSE(r.unescaped);
  ASSERT_TRUE(reader.next(r));  // the blank CRLF line is skipped
  EXPECT_EQ(r.path, "pkg/odd, \"name\".py");
  EXPECT_EQ(r.algorithm, "sha256");
  EXPECT_EQ(r.digest, "xyz");
  EXPECT_TRUE(r.unescaped);
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.path, "pkg-1.0.dist-info/RECORD");
  EXPECT_TRUE(r.algorithm.empty());
  EXPECT_FALSE(r.malformed);
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.path, "pkg/nohash.py");  // a row of one field: no hash, not malformed
  EXPECT_TRUE(r.algorithm.empty() && r.digest.empty() && r.size.empty());
  EXPECT_FALSE(r.malformed);
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.path, "pkg/last.py");
  EXPECT_EQ(r.algorithm, "md5");
  EXPECT_FALSE(reader.next(r));
  EXPECT_FALSE(reader.next(r));
}

TEST(Metadata, WheelAndDirectUrl) {
  auto w = parseWheel(
      "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.40.0)\nRoot-Is-Purelib: false\nTag: "
      "cp311-cp311-manylinux_2_17_x86_64\nTag: cp311-cp311-manylinux2014_x86_64\n");
  EXPECT_FALSE(w.rootIsPurelib);
  EXPECT_EQ(w.tags.size(), 2u);
  auto d =
      parseDirectUrl(R"({"url":"https://files/x.whl","archive_info":{"hash":"sha256=AB","hashes":{"sha256":"ab"}}})");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->hashes["sha256"], "ab");
  EXPECT_FALSE(parseDirectUrl("[]").ok());
  EXPECT_FALSE(parseDirectUrl("{}").ok());
  auto e = parseDirectUrl(R"({"url":"file:///src/app","dir_info":{"editable":true}})");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->editable);
}

TEST(Metadata, RequirementsFiles) {
  std::map<std::string, std::string> files = {
      {"app/requirements.txt",
       "# comment\n--index-url https://u:p@example.com/simple\n-r base.txt\n-c constraints.txt\n"
       "torch==2.1.0+cu121 \\\n    --hash=sha256:AAAA\nnumpy>=1.24  # trailing comment\nrequests==${REQ_VERSION}\n"},
      {"app/base.txt", "six==1.16.0\n-r requirements.txt\n"},
      {"app/constraints.txt", "idna<4\n"},
  };
  auto read = [&](const std::string& p) -> std::optional<std::string> {
    auto it = files.find(p);
    return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  auto rf = loadRequirements("app/requirements.txt", read, {{"REQ_VERSION", "2.31.0"}});
  EXPECT_EQ(rf.indexUrls, (std::vector<std::string>{"https://u:p@example.com/simple"}));
  EXPECT_TRUE(rf.usesHashes);
  ASSERT_EQ(rf.lines.size(), 5u);
  EXPECT_EQ(rf.lines[0].text, "six==1.16.0");
  EXPECT_EQ(rf.lines[1].text, "idna<4");
  EXPECT_TRUE(rf.lines[1].constraint);
  EXPECT_EQ(rf.lines[2].text, "torch==2.1.0+cu121");
  EXPECT_EQ(rf.lines[2].hashes, (std::vector<std::string>{"sha256:aaaa"}));
  EXPECT_EQ(rf.lines[2].line, 5);
  EXPECT_EQ(rf.lines[4].text, "requests==2.31.0");
  EXPECT_TRUE(isPinned(*rf.lines[2].req));
  EXPECT_FALSE(isPinned(*rf.lines[3].req));
  EXPECT_EQ(rf.errors.size(), 1u);  // the include cycle
}

TEST(Metadata, TorchVersionPy) {
  auto t = parseTorchVersionPy(
      "from typing import Optional\n__all__ = ['__version__']\n__version__ = '2.1.0+cu121'\ndebug = False\n"
      "cuda: Optional[str] = '12.1'\ngit_version = 'abc123'\nhip: Optional[str] = None\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version, "2.1.0+cu121");
  EXPECT_EQ(t->cuda, "12.1");
  EXPECT_EQ(t->hip, "");
  EXPECT_EQ(t->gitVersion, "abc123");
  EXPECT_FALSE(parseTorchVersionPy("garbage"));
}

}  // namespace python_metadata_test
