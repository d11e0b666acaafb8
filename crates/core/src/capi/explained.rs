//! What the CAPI stage decided, and how it is said: its record of one
//! request ([`propagation_trace`]), that record in words
//! ([`propagation_why`]), and the stage's part of an explanation
//! ([`key_fates`]), each where a reader of the stage's explanation looks.

pub(crate) mod key_fates;
pub(crate) mod propagation_trace;
pub(crate) mod propagation_why;
