// Broken plugin fixture: a shared object without the entry point.
extern "C" __attribute__((visibility("default"))) int schedcache_not_a_plugin() {
  return 42;
}
