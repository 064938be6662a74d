// LoadPolicyPlugin: loads a policy compiled as a shared object and
// registers its factory. See plugin_abi.h for the entry point.
//
// A loaded plugin stays mapped for the life of the process (RTLD_NODELETE):
// policies it made may outlive the registry that named them.
//
// Thread contract: call while building a registry, from one thread.
#ifndef SCHEDCACHE_POLICIES_PLUGIN_LOADER_H_
#define SCHEDCACHE_POLICIES_PLUGIN_LOADER_H_

#include <string>

#include "absl/status/status.h"
#include "policies/policy_registry.h"

namespace schedcache {

// LoadPolicyPlugin opens `path`, checks the plugin's ABI version and
// registers its factory in `builder`. Errors name the path:
//  - NotFound: the file cannot be opened (dlopen's message);
//  - InvalidArgument: no `schedcache_policy_plugin` entry point, or it
//    returns no descriptor or no factory;
//  - FailedPrecondition: the plugin was built for another ABI version;
//  - AlreadyExists: its policy name is already registered.
absl::Status LoadPolicyPlugin(const std::string& path,
                              PolicyRegistryBuilder& builder);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_PLUGIN_LOADER_H_
