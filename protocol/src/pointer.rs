//! JSON Pointers (RFC 6901) for the members of a view that a move changed.
//!
//! Why not `format!`: a move's patch names a few members, and the formatting machinery
//! cost about as much per pointer as the rest of building it (a profile of the move path
//! showed `format!` at 6 % of the server's instructions). The segments here are member
//! names of our own views and array indices: none holds `~` or `/`, so none is escaped.

/// One segment of a pointer: a member name or an array index.
pub trait Segment {
    /// Appends the segment's text (without its `/`).
    fn push_to(&self, out: &mut String);
}

impl Segment for str {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl<T: Segment + ?Sized> Segment for &T {
    fn push_to(&self, out: &mut String) {
        (**self).push_to(out);
    }
}

macro_rules! integer_segments {
    ($($t:ty),*) => {$(
        impl Segment for $t {
            fn push_to(&self, out: &mut String) {
                out.push_str(itoa::Buffer::new().format(*self));
            }
        }
    )*};
}
integer_segments!(u8, u16, u32, u64, usize);

/// Room for a prefix the server adds in place (`/state`) without reallocating.
pub const CAPACITY: usize = 40;

/// Builds a JSON Pointer from its segments: `pointer!("cells", 3, "stone")` is
/// `"/cells/3/stone"`.
#[macro_export]
macro_rules! pointer {
    ($($segment:expr),+ $(,)?) => {{
        let mut p = ::std::string::String::with_capacity($crate::pointer::CAPACITY);
        $(
            p.push('/');
            $crate::pointer::Segment::push_to(&$segment, &mut p);
        )+
        p
    }};
}

#[cfg(test)]
mod tests {
    #[test]
    fn pointers_are_the_segments_joined_by_slashes() {
        let side = "black";
        assert_eq!(pointer!("rows", 6u8, 12usize), "/rows/6/12");
        assert_eq!(pointer!("groups", side), "/groups/black");
        assert_eq!(
            pointer!("levels", 0u32, "rows", 10u64, 255u8),
            "/levels/0/rows/10/255"
        );
        assert!(pointer!("a").capacity() >= super::CAPACITY);
    }
}
