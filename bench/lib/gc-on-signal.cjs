// Preloaded into benchmark server processes only: SIGUSR2 runs a full garbage collection, so
// memory per connection is read after GC. Needs --expose-gc.
process.on('SIGUSR2', () => {
  if (typeof global.gc === 'function') global.gc();
});
