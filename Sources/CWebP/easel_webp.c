/* Intentionally empty: the target exists to link libwebp and export its headers. */
