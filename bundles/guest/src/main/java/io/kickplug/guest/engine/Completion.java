package io.kickplug.guest.engine;

/** A collected request on its way to the submitting vCPU, which runs the callback. */
record Completion(IoRequest io, int status, long at, boolean hipri) {
}
