#!/usr/bin/env python3
"""A corpus of SMS as Korean and French phones receive them, for `blocklist sms bench` and
Scripts/hyperscan-bench.sh (issue 45, item 8): most messages are ordinary (card payments, codes,
deliveries, appointments, friends and family), some are the scams the rules in
Benchmarks/realistic-rules.json aim at, written as they are sent (brackets, links, numbers, line
breaks), with names, sums, times and links varied by a seeded generator so that no two messages
are alike.

With --salad, a stress corpus instead: each message 5–40 words drawn from Korean and French
words and the rules' own (USPS, package, hold, gagnez, iPhone, 대출, a code), so that nearly every
message holds several of the regexes' literals in any order and their lazy DFAs meet new states.

Usage: Scripts/realistic-sms.py [--count N] [--seed S] [--spam FRACTION | --salad] > messages.jsonl
"""
import argparse
import json
import random
import sys

NAMES_KO = ["김민준", "이서연", "박지호", "최수아", "정예준", "강하은", "조도윤", "윤서윤"]
NAMES_FR = ["Camille", "Lucas", "Léa", "Hugo", "Chloé", "Louis", "Manon", "Théo"]
SHOPS_KO = ["스타벅스", "GS25", "이마트", "쿠팡", "배달의민족", "올리브영", "CU", "교보문고"]
PLACES_FR = ["la boulangerie", "la gare", "chez Paul", "le café", "la pharmacie", "le cinéma"]


def won(r):
    return f"{r.randrange(1, 400) * 100:,}원"


def digits(r, n):
    return "".join(r.choice("0123456789") for _ in range(n))


def link(r):
    host = r.choice(["usps-track", "redelivery-help", "colis-suivi", "prix-gagnant", "bit", "cutt", "is"])
    tld = r.choice([".top", ".xyz", ".info", ".ly", ".gd", ".com"])
    return f"https://{host}{tld}/{''.join(r.choice('abcdefghjkmnpqrstuvwxyz23456789') for _ in range(6))}"


def ham(r):
    name_ko, name_fr = r.choice(NAMES_KO), r.choice(NAMES_FR)
    hour, minute = r.randrange(7, 23), r.randrange(0, 60)
    return r.choice([
        lambda: f"[Web발신]\n[KB국민카드] {name_ko}님 {r.randrange(1, 13):02}/{r.randrange(1, 29):02} {hour:02}:{minute:02} "
                f"일시불 {won(r)} {r.choice(SHOPS_KO)} 승인 누적 {won(r)}",
        lambda: f"[Web발신]\n인증번호 [{digits(r, 6)}]를 입력해주세요. 타인에게 절대 알려주지 마세요.",
        lambda: f"CJ대한통운 고객님의 상품이 배송완료 되었습니다. 운송장번호 {digits(r, 12)} 문의 1588-1255",
        lambda: f"{r.choice(['엄마', '여보', '형', '민지야'])} 오늘 {r.choice(['저녁에', '회의 끝나고', '퇴근하고'])} "
                f"{r.choice(['좀 늦을 것 같아', '바로 갈게', '전화할게'])} {r.choice(['ㅎㅎ', '^^', '', '😊'])}",
        lambda: f"내일 {r.choice(['회의는', '점심 약속은', '수업은'])} {r.choice(['오전', '오후'])} {r.randrange(1, 12)}시로 "
                f"변경되었습니다. 참석 부탁드립니다. - {name_ko}",
        lambda: f"[{r.choice(SHOPS_KO)}] 주문하신 상품이 출고되었습니다. 배송조회: {digits(r, 10)}",
        lambda: f"Bonjour, votre rendez-vous chez le Dr {r.choice(['Martin', 'Bernard', 'Dubois'])} est confirmé "
                f"pour le {r.randrange(1, 29)}/{r.randrange(1, 13):02} à {hour}h{minute:02}. Pour annuler, répondez STOP.",
        lambda: f"Votre code de vérification est {digits(r, 6)}. Ne le communiquez à personne.",
        lambda: f"Colissimo : votre colis {digits(r, 2)}A{digits(r, 9)} sera livré demain entre {hour}h et {hour + 3}h.",
        lambda: f"Salut {name_fr} ! On se retrouve ce soir à {r.choice(PLACES_FR)} vers {hour}h ? "
                f"{r.choice(['Bisous', 'À plus', 'Dis-moi', ''])}",
        lambda: f"{name_fr}, n'oublie pas le dîner chez mamie dimanche, elle a préparé un gâteau 🎂",
        lambda: f"Orange : votre facture de {r.randrange(15, 90)},{r.randrange(0, 100):02} € est disponible dans "
                f"votre Espace Client.",
        lambda: f"SNCF : votre train TGV {r.randrange(6000, 9999)} du {r.randrange(1, 29)}/{r.randrange(1, 13):02} "
                f"part à {hour}h{minute:02}, voiture {r.randrange(1, 18)}, place {r.randrange(1, 90)}.",
        lambda: f"Your {r.choice(['UPS', 'FedEx', 'DHL'])} package {digits(r, 10)} was delivered today at "
                f"{hour}:{minute:02}. Thank you for shipping with us.",
    ])()


def spam(r):
    return r.choice([
        lambda: f"[USPS] Your package is on hold due to an incomplete address. Please redeliver within 12 hours: {link(r)}",
        lambda: f"USPS: We were unable to deliver your parcel #{digits(r, 8)}.\nIt will be held until you "
                f"update your details: {link(r)}",
        lambda: f"[국제발신]\nDHL 고객님의 package가 주소 불명으로 hold 되었습니다. 확인: {link(r)}",
        lambda: f"Félicitations ! Vous avez gagné un iPhone 15 Pro. Réclamez votre cadeau ici : {link(r)}",
        lambda: f"Vous avez remporté notre grand prix de {r.randrange(500, 5000)} € ! Confirmez vite : {link(r)}",
        lambda: f"[국외발신]\n무담보 대출 최대 {r.randrange(1, 9)}천만원 당일 승인! 상담 010-{digits(r, 4)}-{digits(r, 4)}",
        lambda: f"(광고) 정부지원 저금리 대출 안내. 신용등급 무관 {r.randrange(2, 6)}% 대출 가능 ☎ 1600-{digits(r, 4)}",
        lambda: f"Colis en attente : FedEx package suspendu, frais de {r.randrange(1, 4)},99 € à régler : {link(r)}",
    ])()


SALAD = ["안녕하세요", "오늘", "내일", "회의는", "세시", "오후", "날씨가", "좋네요", "대출", "bonjour", "merci",
         "votre", "pour", "est", "le", "un", "à", "on", "demain", "colis", "code", "USPS", "package", "hold",
         "gagnez", "iPhone", "123456"]


def salad(r):
    return " ".join(r.choice(SALAD) for _ in range(r.randrange(5, 41)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--spam", type=float, default=0.15, help="the share of scams (default 0.15)")
    parser.add_argument("--salad", action="store_true", help="word salad of the rules' literals (a stress corpus)")
    arguments = parser.parse_args()
    if arguments.count < 1 or not 0 <= arguments.spam <= 1:
        parser.error("--count must be at least 1 and --spam between 0 and 1")
    r = random.Random(arguments.seed)
    for index in range(arguments.count):
        body = salad(r) if arguments.salad else spam(r) if r.random() < arguments.spam else ham(r)
        sender = f"+8210{digits(r, 8)}" if r.random() < 0.6 else f"+336{digits(r, 8)}"
        json.dump({"sender": sender, "body": body}, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
