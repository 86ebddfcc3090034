"""The payroll calendar the templates read: when a payslip is out."""

from datetime import date

from tools.domain import latest_payslip_month, payslip_day


def test_payslips_appear_three_working_days_before_payday():
    assert payslip_day(2026, 12) == date(2026, 12, 22)  # payday Friday the 25th
    assert payslip_day(2026, 10) == date(2026, 10, 20)  # the 25th is a Sunday: paid Friday the 23rd
    assert payslip_day(2026, 11) == date(2026, 11, 20)  # payday Wednesday: the Friday before


def test_the_newest_payslip_is_this_months_once_it_is_out():
    assert latest_payslip_month(date(2026, 12, 1)) == "2026-11"
    assert latest_payslip_month(date(2026, 12, 21)) == "2026-11"
    assert latest_payslip_month(date(2026, 12, 22)) == "2026-12"
    assert latest_payslip_month(date(2026, 1, 5)) == "2025-12"  # across the year
