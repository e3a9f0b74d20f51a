#include "kernodeck/oci/image_ref.h"

#include <gtest/gtest.h>

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
