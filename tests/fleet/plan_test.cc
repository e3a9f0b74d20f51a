// The fleet plan: shards balanced by bytes, images dealt by count, and the plan's JSON read
// back exactly; anything that is not a plan is refused.
#include "kernodeck/fleet/plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "kernodeck/util/hash.h"

namespace fleet_plan_test {

using namespace kernodeck;
using namespace kernodeck::fleet;

namespace {

oci::Descriptor layer(int64_t size, int n) {
  return {
      "application/vnd.oci.image.layer.v1.tar+gzip", {"sha256", util::sha256Hex(std::to_string(n))}, size, {}, {}, {}};
}

struct BalanceCase {
  int shards;
  std::vector<int64_t> sizes;
  uint64_t maxSpread;  // heaviest minus lightest shard
};

TEST(FleetPlan, LayersAreBalancedByBytes) {
  const BalanceCase cases[] = {
      {4, {100, 100, 100, 100}, 0},
      {2, {70, 50, 40, 30, 10}, 0},  // largest first: {70,30} and {50,40,10}
      {3, {1000, 1, 1, 1}, 999},     // one layer heavier than the rest sits alone
      {4, {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, 5},
      {1, {3, 2, 1}, 0},
  };
  for (const auto& c : cases) {
    Plan p;
    p.shards = c.shards;
    for (size_t i = 0; i < c.sizes.size(); ++i) p.layers.push_back({layer(c.sizes[i], static_cast<int>(i)), "r/x", -1});
    for (int i = 0; i < 9; ++i) p.images.push_back({"r/x", {}, layer(1, 100 + i), {}, -1});
    assignShards(p);
    auto bytes = p.shardBytes();
    ASSERT_EQ(bytes.size(), size_t(c.shards));
    EXPECT_EQ(*std::max_element(bytes.begin(), bytes.end()) - *std::min_element(bytes.begin(), bytes.end()),
              c.maxSpread)
        << c.shards << " shards";
    std::vector<int> perShard(static_cast<size_t>(c.shards), 0);
    for (const auto& img : p.images) perShard.at(static_cast<size_t>(img.shard))++;
    EXPECT_LE(*std::max_element(perShard.begin(), perShard.end()) - *std::min_element(perShard.begin(), perShard.end()),
              1);
  }
}

TEST(FleetPlan, JsonRoundTrips) {
  Plan p;
  p.shards = 2;
  p.cacheRepo = "localhost:5000/kernodeck/cache";
  p.platform = "linux/amd64";
  p.layers = {{layer(10, 1), "localhost:5000/a", 0}, {layer(20, 2), "localhost:5000/b", 1}};
  p.images = {{"localhost:5000/a", {"1.0", "latest"}, layer(300, 3), {layer(10, 1).digest, layer(20, 2).digest}, 1}};
  p.images[0].manifest.mediaType = oci::media::kOciManifest;
  auto back = parsePlan(p.toJson().dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->toJson(), p.toJson());
  EXPECT_EQ(back->images[0].ref(), "localhost:5000/a@" + layer(300, 3).digest.str());
}

TEST(FleetPlan, RefusesWhatIsNotAPlan) {
  Plan p;
  p.shards = 2;
  p.cacheRepo = "h/c";
  p.layers = {{layer(10, 1), "h/a", 0}};
  nlohmann::json good = p.toJson();
  auto mutate = [&](auto f) {
    nlohmann::json j = good;
    f(j);
    return j.dump();
  };
  const std::string bad[] = {
      "",
      "[]",
      "{}",
      R"({"schema":"kernodeck.fleet-plan/v2"})",
      mutate([](auto& j) { j["shards"] = 0; }),
      mutate([](auto& j) { j["layers"][0]["shard"] = 2; }),
      mutate([](auto& j) { j["layers"][0]["layer"]["digest"] = "sha256:zz"; }),
      mutate([](auto& j) { j.erase("cache_repo"); }),
      mutate([](auto& j) {
        j["images"] = {{{"repository", "h/a"}}};
      }),
  };
  for (const auto& b : bad) EXPECT_FALSE(parsePlan(b).ok()) << b;
}

}  // namespace

}  // namespace fleet_plan_test
