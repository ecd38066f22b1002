//! The envelope of a persisted row: its top-level fields, read without touching `event_data`.
//!
//! Every reader (store admission, the projector, the legacy paths) goes through this one parse so
//! that a row means the same thing everywhere. `event_data` stays a borrowed [`RawValue`]: rows of
//! unknown classes are never parsed beyond this point (catalog P1).

use super::thread_id::canonical_thread_id;
use std::borrow::Cow;
use std::fmt;

use serde_json::value::RawValue;

use super::family::Family;
use super::json::{self, ObjectError};
use super::payload::PayloadCell;
use crate::Planted;

/// The 8 identity fields, in the contract's order (dedup key and sort tie-breakers).
pub const IDENTITY_FIELDS: [&str; 8] = [
    "agent_class",
    "agent_id",
    "thread_id",
    "display_id",
    "run_id",
    "event_type",
    "event_name",
    "event_id",
];

/// All fields the envelope reads: the identity, then `event_parents` and `event_data`.
const FIELDS: [&str; 10] = {
    let mut fields = [""; 10];
    let mut i = 0;
    while i < IDENTITY_FIELDS.len() {
        fields[i] = IDENTITY_FIELDS[i];
        i += 1;
    }
    fields[8] = "event_parents";
    fields[9] = "event_data";
    fields
};
const PARENTS: usize = 8;
const DATA: usize = 9;
pub(crate) const AGENT_CLASS: usize = 0;
pub(crate) const AGENT_ID: usize = 1;
pub(crate) const THREAD_ID: usize = 2;
pub(crate) const DISPLAY_ID: usize = 3;
pub(crate) const RUN_ID: usize = 4;
pub(crate) const EVENT_TYPE: usize = 5;
pub(crate) const EVENT_ID: usize = 7;

/// The top-level fields of one row, borrowed from its bytes.
pub(crate) struct Envelope<'a> {
    fields: json::Fields<'a, 10>,
}

/// Why a row cannot be indexed by a store (contract, "Store admission"). Names the field, never
/// its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AdmissionError {
    /// The bytes are not a JSON object.
    Object(ObjectError),
    /// An indexed field is missing.
    Missing(&'static str),
    /// An indexed field is present with the wrong type.
    WrongType {
        field: &'static str,
        expected: &'static str,
    },
}

impl fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdmissionError::Object(e) => e.fmt(f),
            AdmissionError::Missing(field) => write!(f, "field `{field}` is missing"),
            AdmissionError::WrongType { field, expected } => {
                write!(f, "field `{field}` is not {expected}")
            }
        }
    }
}

/// What a store indexes a row by. Only exists for rows that pass admission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IndexKey<'a> {
    pub thread_id: Cow<'a, str>,
    pub display_id: Cow<'a, str>,
    pub event_type: Cow<'a, str>,
    pub agent_class: Cow<'a, str>,
    pub parents: Vec<Cow<'a, str>>,
}

impl<'a> Envelope<'a> {
    /// Reads the envelope of `bytes`; an error if they are not one JSON object.
    pub fn parse(bytes: &'a [u8]) -> Result<Envelope<'a>, ObjectError> {
        json::object_fields(bytes, &FIELDS).map(|fields| Envelope { fields })
    }

    /// Field `index` of [`IDENTITY_FIELDS`] as a string, `None` if missing or not a string.
    pub fn str_field(&self, index: usize) -> Option<Cow<'a, str>> {
        assert!(
            index < IDENTITY_FIELDS.len(),
            "identity field index {index} out of range"
        );
        self.fields[index].and_then(json::as_str)
    }

    /// `event_parents` when it is an array of strings.
    pub fn parents(&self) -> Option<Vec<Cow<'a, str>>> {
        self.fields[PARENTS].and_then(json::as_str_array)
    }

    /// `event_data`, unparsed.
    pub fn data(&self) -> Option<&'a RawValue> {
        self.fields[DATA]
    }

    /// What the projector reads: `None` when `event_parents` is not an array of strings (such a
    /// row belongs to no family).
    pub fn fields(&self) -> Option<EnvelopeFields<'a>> {
        Some(EnvelopeFields {
            identity: std::array::from_fn(|i| self.str_field(i)),
            parents: Cow::Owned(self.parents()?),
            data: self.data(),
            family_data: None,
        })
    }

    /// What the projector reads of a row the store may index, or why the row must be
    /// quarantined. The index key's strings are among the fields the projector reads, so a row
    /// whose fields read with those strings present is admissible, each field read once.
    pub fn admissible_fields(&self) -> Result<EnvelopeFields<'a>, AdmissionError> {
        if let Some(fields) = self.fields() {
            let indexed = [THREAD_ID, DISPLAY_ID, EVENT_TYPE, AGENT_CLASS];
            if indexed.iter().all(|&i| fields.identity[i].is_some()) {
                return Ok(fields);
            }
        }
        // An indexed field is missing or of the wrong type: reading the key names it.
        Err(self
            .index_key()
            .expect_err("a row whose projector fields and indexed strings read has an index key"))
    }

    /// The store's index key, or why the row must be quarantined.
    pub fn index_key(&self) -> Result<IndexKey<'a>, AdmissionError> {
        let string = |index: usize| -> Result<Cow<'a, str>, AdmissionError> {
            let field = IDENTITY_FIELDS[index];
            let raw = self.fields[index].ok_or(AdmissionError::Missing(field))?;
            json::as_str(raw).ok_or(AdmissionError::WrongType {
                field,
                expected: "a string",
            })
        };
        // Persistence stores a row under its thread's canonical id (P16).
        let thread_id = match string(THREAD_ID)? {
            Cow::Borrowed(id) => canonical_thread_id(id),
            Cow::Owned(id) => Cow::Owned(canonical_thread_id(&id).into_owned()),
        };
        let display_id = string(DISPLAY_ID)?;
        let event_type = string(EVENT_TYPE)?;
        let agent_class = string(AGENT_CLASS)?;
        let raw = self.fields[PARENTS].ok_or(AdmissionError::Missing("event_parents"))?;
        let parents = json::as_str_array(raw).ok_or(AdmissionError::WrongType {
            field: "event_parents",
            expected: "an array of strings",
        })?;
        Ok(IndexKey {
            thread_id,
            display_id,
            event_type,
            agent_class,
            parents,
        })
    }
}

/// What the projector reads of a row's envelope: its identity fields (each as
/// [`Envelope::str_field`] reads it), its class chain and its unparsed `event_data`. Borrowed
/// either from the row's bytes or from a [`KeptEnvelope`].
pub(crate) struct EnvelopeFields<'a> {
    pub identity: [Option<Cow<'a, str>>; 8],
    pub parents: Cow<'a, [Cow<'a, str>]>,
    pub data: Option<&'a RawValue>,
    /// The fields of `data` that the rules of one family read, when a [`KeptEnvelope`] read them.
    pub family_data: Option<FamilyData<'a>>,
}

/// The two fields of `event_data` the projector reads for a row of `family`: `created_at` and
/// the family's payload field, as [`json::raw_object_fields`] reads them (`None` for both when
/// `event_data` is not an object).
#[derive(Clone, Copy)]
pub(crate) struct FamilyData<'a> {
    pub family: Family,
    pub fields: [Option<&'a RawValue>; 2],
    /// `created_at` as [`json::as_integer`] reads it: every read of a kept row sorts by it.
    pub created_at: Option<i128>,
    /// Where a kept row keeps what its payload says (`None` for a row read from its bytes).
    pub reading: Option<&'a PayloadCell>,
}

impl<'a> FamilyData<'a> {
    /// The fields of `data` a row of `family` reads.
    pub fn read(family: Family, data: Option<&'a RawValue>) -> FamilyData<'a> {
        let names = ["created_at", family.payload_field()];
        let fields = data
            .and_then(|d| json::raw_object_fields(d, &names))
            .unwrap_or([None, None]);
        FamilyData {
            family,
            fields,
            created_at: fields[0].and_then(json::as_integer),
            reading: None,
        }
    }
}

impl<'a> EnvelopeFields<'a> {
    /// Field `index` of [`IDENTITY_FIELDS`] as a borrowed string, `None` if missing or not a
    /// string.
    pub fn str_field(&self, index: usize) -> Option<&str> {
        self.identity[index].as_deref()
    }
}

/// A row's envelope read once, at admission, and kept with the row, so that a store that keeps
/// rows in memory can hand the projector rows it need not parse again. Its fields are exactly
/// what [`Envelope::fields`] reads from the row's bytes.
#[derive(Debug)]
pub(crate) struct KeptEnvelope {
    /// The identity fields' strings, one after the other (one allocation a row).
    identity_text: String,
    /// Where each identity field lies in `identity_text`; `None` if missing or not a string.
    identity: [Option<(usize, usize)>; 8],
    parents: Vec<Cow<'static, str>>,
    data: Option<Box<RawValue>>,
    /// For a row of a family (as the store's planted bugs name it): the fields of `data` its
    /// family reads. Rows of no family keep none: their `event_data` is never parsed.
    family_data: Option<KeptFamilyData>,
}

/// [`FamilyData`], owned.
#[derive(Debug)]
struct KeptFamilyData {
    family: Family,
    fields: [Option<Box<RawValue>>; 2],
    created_at: Option<i128>,
    /// What the payload says, once a projection has read it.
    reading: PayloadCell,
}

impl KeptEnvelope {
    /// The fields of `fields`, owned, and those of its `event_data` that the family `planted`
    /// gives its class chain reads.
    pub fn of(fields: &EnvelopeFields<'_>, planted: Planted) -> KeptEnvelope {
        let family_data = Family::of_parents(&fields.parents, planted).map(|family| {
            let read = FamilyData::read(family, fields.data);
            KeptFamilyData {
                family,
                fields: read.fields.map(|f| f.map(ToOwned::to_owned)),
                created_at: read.created_at,
                reading: PayloadCell::new(),
            }
        });
        // Sized once: growing it field by field reallocated it about four times a row.
        let identity_len = fields.identity.iter().flatten().map(|f| f.len()).sum();
        let mut identity_text = String::with_capacity(identity_len);
        let identity = fields.identity.each_ref().map(|f| {
            let start = identity_text.len();
            identity_text.push_str(f.as_deref()?);
            Some((start, identity_text.len()))
        });
        KeptEnvelope {
            family_data,
            identity_text,
            identity,
            parents: fields
                .parents
                .iter()
                .map(|p| Cow::Owned(p.as_ref().to_owned()))
                .collect(),
            data: fields.data.map(ToOwned::to_owned),
        }
    }

    /// The kept fields, borrowed.
    pub fn fields(&self) -> EnvelopeFields<'_> {
        EnvelopeFields {
            identity: std::array::from_fn(|i| self.str_field(i).map(Cow::Borrowed)),
            parents: Cow::Borrowed(&self.parents),
            data: self.data.as_deref(),
            family_data: self.family_data.as_ref().map(|kept| FamilyData {
                family: kept.family,
                fields: kept.fields.each_ref().map(|f| f.as_deref()),
                created_at: kept.created_at,
                reading: Some(&kept.reading),
            }),
        }
    }

    /// Field `index` of [`IDENTITY_FIELDS`], as [`Envelope::str_field`] read it.
    pub fn str_field(&self, index: usize) -> Option<&str> {
        self.identity[index].map(|(start, end)| &self.identity_text[start..end])
    }

    /// The row's class chain.
    pub fn parents(&self) -> &[Cow<'static, str>] {
        &self.parents
    }
}

/// Reads the index key of a row about to be stored.
pub(crate) fn admit(bytes: &[u8]) -> Result<IndexKey<'_>, AdmissionError> {
    Envelope::parse(bytes)
        .map_err(AdmissionError::Object)?
        .index_key()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_needs_the_indexed_fields_only() {
        let ok = br#"{"thread_id":"t","display_id":"d","event_type":"display_event",
            "agent_class":"UserAgent","event_parents":["UserMessageEvent"],"event_id":7}"#;
        let key = admit(ok).expect("admitted");
        assert_eq!(key.thread_id, "t");
        assert_eq!(key.parents, vec!["UserMessageEvent"]);
    }

    #[test]
    fn a_kept_envelope_reads_as_the_bytes_do() {
        let rows: [&[u8]; 9] = [
            br#"{"agent_class":"A\u0041","agent_id":"","thread_id":7,"display_id":"d",
                "event_parents":["ChunkEvent","x\"y"],"event_data":{"content":"c"}}"#,
            br#"{"event_parents":[],"event_data":null,"event_id":"e"}"#,
            br#"{"event_parents":["StopEvent"]}"#,
            br#"{"event_parents":["StopEvent"],"event_data":{"created_at":1,"output_messages":[]}}"#,
            // `created_at` as the projector must take it or refuse it.
            br#"{"event_parents":["ChunkEvent"],"event_data":{"created_at":1700000000000000000}}"#,
            br#"{"event_parents":["ChunkEvent"],"event_data":{"created_at":-5}}"#,
            br#"{"event_parents":["ChunkEvent"],"event_data":{"created_at":"17"}}"#,
            br#"{"event_parents":["ChunkEvent"],"event_data":{"created_at":1.5}}"#,
            br#"{"event_parents":["ChunkEvent"],"event_data":{"created_at":18446744073709551615}}"#,
        ];
        for bytes in rows {
            let env = Envelope::parse(bytes).expect("an object");
            let read = env.fields().expect("a class chain");
            let kept = KeptEnvelope::of(&read, Planted::none());
            let again = kept.fields();
            assert_eq!(again.identity, read.identity);
            assert_eq!(again.parents, read.parents);
            assert_eq!(again.data.map(RawValue::get), read.data.map(RawValue::get));
            for i in 0..IDENTITY_FIELDS.len() {
                assert_eq!(kept.str_field(i), read.str_field(i));
            }
            let family = Family::of_parents(&read.parents, Planted::none());
            let kept_data = again.family_data.map(|d| {
                (
                    d.family,
                    d.fields.map(|f| f.map(RawValue::get)),
                    d.created_at,
                )
            });
            let read_data = family.map(|f| {
                let data = FamilyData::read(f, read.data);
                (
                    f,
                    data.fields.map(|f| f.map(RawValue::get)),
                    data.created_at,
                )
            });
            assert_eq!(kept_data, read_data);
            if let Some(d) = again.family_data {
                assert_eq!(d.created_at, d.fields[0].and_then(json::as_integer));
            }
        }
        let no_chain = br#"{"event_parents":"ChunkEvent"}"#;
        assert!(Envelope::parse(no_chain)
            .expect("an object")
            .fields()
            .is_none());
    }

    #[test]
    fn admission_errors_name_the_field() {
        let cases: [(&[u8], &str); 6] = [
            (b"nope", "not valid JSON"),
            (b"[1,2]", "not an object"),
            (br#"{"display_id":"d","event_type":"E","agent_class":"A","event_parents":[]}"#, "`thread_id` is missing"),
            (br#"{"thread_id":1,"display_id":"d","event_type":"E","agent_class":"A","event_parents":[]}"#, "`thread_id` is not a string"),
            (br#"{"thread_id":"t","display_id":"d","event_type":"E","agent_class":"A","event_parents":["x",2]}"#, "`event_parents` is not an array of strings"),
            (br#"{"thread_id":"t","display_id":"d","event_type":"E","agent_class":"A"}"#, "`event_parents` is missing"),
        ];
        for (bytes, want) in cases {
            let got = admit(bytes).expect_err("quarantined").to_string();
            assert!(got.contains(want), "{got:?} should contain {want:?}");
            if let Ok(env) = Envelope::parse(bytes) {
                let refused = env.admissible_fields().err().expect("refused");
                assert_eq!(
                    refused.to_string(),
                    got,
                    "the store refuses as admission reads"
                );
            }
        }
    }

    #[test]
    fn an_admissible_row_has_an_index_key_and_the_fields_each_reading_gives() {
        let rows: [&[u8]; 3] = [
            br#"{"thread_id":"t","display_id":"d","event_type":"display_event",
                "agent_class":"UserAgent","event_parents":["UserMessageEvent"],"event_id":7}"#,
            br#"{"thread_id":"t\u0041","display_id":"","event_type":"E","agent_class":"A",
                "agent_id":"a","event_parents":[],"event_data":{"content":"c"}}"#,
            br#"{"thread_id":"t","display_id":"d","event_type":"E","agent_class":"A",
                "event_parents":["ChunkEvent","x\"y"],"event_name":null}"#,
        ];
        for bytes in rows {
            let env = Envelope::parse(bytes).expect("an object");
            let fields = env.admissible_fields().expect("admitted");
            env.index_key().expect("an index key");
            let read = env.fields().expect("a class chain");
            assert_eq!(fields.identity, read.identity);
            assert_eq!(fields.parents, read.parents);
            assert_eq!(fields.data.map(RawValue::get), read.data.map(RawValue::get));
        }
    }
}
