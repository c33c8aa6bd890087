int rule() { return 1; }
