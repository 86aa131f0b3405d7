/** The value cannot be given; the message is the reason shown to people (the core's
 * `_Unavailable`). */
export class Unavailable extends Error {}

/** A bound of the read was reached (time, files, sizes): the values are missing. */
export class TooMuch extends Unavailable {}
