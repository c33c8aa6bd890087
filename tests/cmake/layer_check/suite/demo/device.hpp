int device_count();
