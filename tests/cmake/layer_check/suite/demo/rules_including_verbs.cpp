#include <infiniband/verbs.h>
int rule() { return 1; }
