/* The same through pkg-config, from C. */
#include <loom/loom.h>
#include <stdio.h>

int main(void) {
  int version = 0;
  if (loomGetVersion(&version) != loomSuccess) return 1;
  printf("consumer.c: Loom %d\n", version);
  return version == LOOM_VERSION_CODE ? 0 : 1;
}
