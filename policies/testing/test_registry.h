// The registry policy tests share: the built-ins plus the example plugin,
// so every test can build any policy by name.
#ifndef SCHEDCACHE_POLICIES_TESTING_TEST_REGISTRY_H_
#define SCHEDCACHE_POLICIES_TESTING_TEST_REGISTRY_H_

#include <string>

#include "policies/policy_registry.h"

namespace schedcache::test_support {

// ExamplePluginPath is the built example plugin (.so).
std::string ExamplePluginPath();

// TestRegistry returns the built-ins and the example plugin, built once.
// REQUIRES: the plugin loads (a test that needs it asserts so first).
const PolicyRegistry& TestRegistry();

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_POLICIES_TESTING_TEST_REGISTRY_H_
