/** {@code kp:compare}: one fio job against several notification strategies on one disk, rounds interleaved. */
package io.kickplug.guest.compare;
