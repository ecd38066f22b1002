use sim::display::{generate::generate, DisplayOptions};
use sim::rng::SeedRng;
fn main() {
    let n: u64 = std::env::args().nth(1).unwrap().parse().unwrap();
    let ids: Vec<u32> = std::env::args()
        .skip(2)
        .map(|a| a.parse().unwrap())
        .collect();
    let seed = SeedRng::new(n);
    let o = DisplayOptions::from_seed(seed, None);
    let s = generate(seed, &o);
    for st in s.steps() {
        if ids.is_empty() || ids.iter().any(|i| (*i as i64 - st.id as i64).abs() <= 3) {
            println!(
                "{} {} {} {:?} {:?}",
                st.id, st.agent, st.display, st.event, st.defect
            );
        }
    }
}
