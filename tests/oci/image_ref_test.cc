#include "kernodeck/oci/image_ref.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace oci_image_ref_test {

using namespace kernodeck::oci;

TEST(ImageRef, Transports) {
  const std::string d = "sha256:" + std::string(64, 'c');
  struct Case {
    std::string in;
    Transport t;
    std::string path, tag;
    bool digest;
  } cases[] = {
      {"oci:/x/layout", Transport::OciLayout, "/x/layout", "", false},
      {"oci:/x/layout:1.0", Transport::OciLayout, "/x/layout", "1.0", false},
      {"oci:/x/layout@" + d, Transport::OciLayout, "/x/layout", "", true},
      {"oci-archive:/a.tar:v2", Transport::OciArchive, "/a.tar", "v2", false},
      {"docker-archive:/a.tar", Transport::DockerArchive, "/a.tar", "", false},
      {"docker-archive:/a.tar:team/app:1.0", Transport::DockerArchive, "/a.tar", "team/app:1.0", false},
      {"dir:/", Transport::Dir, "/", "", false},
      {"rootfs:/srv/root", Transport::RootFs, "/srv/root", "", false},
      {"docker-archive:/a.tar:@1", Transport::DockerArchive, "/a.tar", "", false},
      {"ubuntu:22.04", Transport::Registry, "ubuntu", "22.04", false},
      {"localhost:5000/team/app@" + d, Transport::Registry, "localhost:5000/team/app", "", true},
      {"docker://localhost:5000/app:1", Transport::Registry, "localhost:5000/app", "1", false},
  };
  for (const auto& c : cases) {
    auto r = parseImageRef(c.in);
    ASSERT_TRUE(r.ok()) << c.in;
    EXPECT_EQ(r->transport, c.t) << c.in;
    EXPECT_EQ(r->path, c.path) << c.in;
    EXPECT_EQ(r->tag, c.tag) << c.in;
    EXPECT_EQ(r->digest.has_value(), c.digest) << c.in;
    EXPECT_EQ(r->mutableTag(), !c.digest) << c.in;
  }
  EXPECT_FALSE(parseImageRef("").ok());
  EXPECT_FALSE(parseImageRef("oci:").ok());
  EXPECT_FALSE(parseImageRef("oci:/x@sha256:123").ok());
  EXPECT_EQ(parseImageRef("docker-archive:/a.tar:@12")->sourceIndex, 12u);
  EXPECT_FALSE(parseImageRef("docker-archive:/a.tar:@x").ok());
  EXPECT_FALSE(parseImageRef("docker-archive:/a.tar:@").ok());
}

// One function decides what a reference means (resolveImageRef): the transport written, a local
// path by what is there, dir: without manifest.json as a root filesystem; for the probe's
// --image, the registry reference as written, docker:// aside, and no path looked at.
TEST(ImageRefResolve, OneFunctionDecides) {
  char tmpl[] = "/tmp/kdk-resolve-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string root = tmpl;
  ASSERT_EQ(::mkdir((root + "/rootfs").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root + "/rootfs/etc").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root + "/layout").c_str(), 0755), 0);
  std::ofstream(root + "/layout/oci-layout") << R"({"imageLayoutVersion":"1.0.0"})";

  auto written = resolveImageRef("oci:" + root + "/layout:v1");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->ref.transport, Transport::OciLayout);
  EXPECT_EQ(written->note, "");

  auto bare = resolveImageRef(root + "/layout");
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ(bare->ref.transport, Transport::OciLayout);
  EXPECT_NE(bare->note.find("no transport was given"), std::string::npos);

  auto dir = resolveImageRef("dir:" + root + "/rootfs");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->ref.transport, Transport::RootFs);
  EXPECT_NE(dir->note.find("has no manifest.json"), std::string::npos);

  auto missing = resolveImageRef(root + "/absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);

  auto reg = resolveImageRef("docker://localhost:5000/team/app:1");
  ASSERT_TRUE(reg.ok());
  EXPECT_EQ(reg->ref.transport, Transport::Registry);
  EXPECT_EQ(reg->ref.registryName(), "localhost:5000/team/app:1");

  // The probe's --image: a registry reference even where a path of that name exists.
  auto probe = resolveImageRef(root + "/layout", RefUse::RegistryOnly);
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe->ref.transport, Transport::Registry);
  EXPECT_EQ(probe->ref.registryName(), root + "/layout");
  EXPECT_EQ(resolveImageRef("docker://registry.example/app@sha256:" + std::string(64, 'a'), RefUse::RegistryOnly)
                ->ref.registryName(),
            "registry.example/app@sha256:" + std::string(64, 'a'));
  std::filesystem::remove_all(root);
}

}  // namespace oci_image_ref_test
