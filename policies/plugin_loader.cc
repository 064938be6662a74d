#include "policies/plugin_loader.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "policies/plugin_abi.h"

namespace schedcache {

absl::Status LoadPolicyPlugin(const std::string& path,
                              PolicyRegistryBuilder& builder) {
  // RTLD_LOCAL keeps two plugins' symbols apart; RTLD_NODELETE keeps the
  // code mapped after dlclose, so factories and policies never dangle.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::NotFoundError(absl::StrCat("policy plugin ", path,
                                            ": cannot load: ",
                                            error ? error : "unknown error"));
  }
  auto entry = reinterpret_cast<SchedcachePolicyPluginEntry>(
      dlsym(handle, kPolicyPluginEntryPoint));
  if (entry == nullptr) {
    dlclose(handle);
    return absl::InvalidArgumentError(
        absl::StrCat("policy plugin ", path, ": no entry point '",
                     kPolicyPluginEntryPoint, "' (is it extern \"C\"?)"));
  }
  const SchedcachePolicyPlugin* plugin = entry();
  if (plugin == nullptr) {
    dlclose(handle);
    return absl::InvalidArgumentError(absl::StrCat(
        "policy plugin ", path, ": ", kPolicyPluginEntryPoint,
        "() returned no descriptor"));
  }
  if (plugin->abi_version != kPolicyPluginAbiVersion) {
    const uint32_t version = plugin->abi_version;
    dlclose(handle);
    return absl::FailedPreconditionError(absl::StrCat(
        "policy plugin ", path, ": built for plugin ABI version ", version,
        ", this schedcache speaks version ", kPolicyPluginAbiVersion));
  }
  std::unique_ptr<PolicyFactory> factory =
      plugin->create_factory ? plugin->create_factory() : nullptr;
  if (factory == nullptr) {
    dlclose(handle);
    return absl::InvalidArgumentError(absl::StrCat(
        "policy plugin ", path, ": created no policy factory"));
  }
  absl::Status status = builder.Register(std::move(factory));
  if (!status.ok()) {
    // The factory is destroyed inside Register; with RTLD_NODELETE the code
    // stays mapped anyway, so closing here is safe.
    dlclose(handle);
    return absl::Status(status.code(), absl::StrCat("policy plugin ", path,
                                                    ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace schedcache
