// A proof its own check refused is kept as what identifies it, not whole
// (model::trim_rejected_proof).
#include <catch2/catch.hpp>

#include "model/records.hpp"

using namespace receiptd::model;

TEST_CASE("a forged receipt keeps its first bytes and its size; a genuine one is kept whole",
          "[records][fraud]") {
  receipt_record r;
  r.receipt_hash = std::string(64, 'a');
  r.receipt_data = std::string(1000000, 'M');
  apply_fraud(r, fraud_reason::invalid_signature);
  trim_rejected_proof(r);
  CHECK(r.receipt_data == std::string(max_rejected_proof_bytes, 'M'));
  CHECK(r.proof_size == 1000000);
  CHECK(r.receipt_hash == std::string(64, 'a'));
  CHECK(r.fraud == fraud_reason::invalid_signature);

  SECTION("a store's rejection, a pending or a validated receipt: whole") {
    for (auto state : {validation_state::pending, validation_state::validated}) {
      receipt_record ok;
      ok.state = state;
      ok.receipt_data = std::string(1000000, 'M');
      trim_rejected_proof(ok);
      CHECK(ok.receipt_data.size() == 1000000);
      CHECK_FALSE(ok.proof_size);
    }
    receipt_record store_said_no;
    store_said_no.receipt_data = std::string(1000000, 'M');
    apply_fraud(store_said_no, fraud_reason::store_rejected);
    trim_rejected_proof(store_said_no);
    CHECK(store_said_no.receipt_data.size() == 1000000);
  }
  SECTION("a small forged proof is kept whole") {
    receipt_record small;
    small.receipt_data = "MIIB";
    apply_fraud(small, fraud_reason::malformed_receipt);
    trim_rejected_proof(small);
    CHECK(small.receipt_data == "MIIB");
    CHECK_FALSE(small.proof_size);
  }
}

TEST_CASE("a forged StoreKit 2 transaction and Play purchase data likewise", "[records][fraud]") {
  transaction_record t;
  t.signed_transaction = std::string(60000, 'j');
  apply_fraud(t, fraud_reason::invalid_signature);
  trim_rejected_proof(t);
  CHECK(t.signed_transaction.size() == max_rejected_proof_bytes);
  CHECK(t.proof_size == 60000);

  purchase_order_record p;
  p.purchase_data = std::string(30000, 'd');
  p.purchase_signature = std::string(344, 's');
  apply_fraud(p, fraud_reason::invalid_signature);
  trim_rejected_proof(p);
  CHECK(p.purchase_data.size() == max_rejected_proof_bytes);
  CHECK(p.purchase_signature.size() == 344);
  CHECK(p.proof_size == 30000);
}
