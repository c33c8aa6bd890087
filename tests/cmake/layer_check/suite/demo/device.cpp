int device_count() { return 0; }
