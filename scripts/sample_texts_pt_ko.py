"""Portuguese and Korean sample documents (original texts written for this project; fictional)."""

from __future__ import annotations

from sample_docs import Abstract, Doc, body, refs, text

ESPERA = Doc(
    id="pt_scielo_espera",
    language="pt",
    kind="article",
    title="Tempo de espera em unidades básicas de saúde: análise de registros eletrônicos "
    "em um município do Sul do Brasil",
    authors="Ana Paula Ribeiro, Marcelo Teixeira, Juliana Costa e Rafael Nunes",
    affiliation="Programa de Pós-Graduação em Saúde Coletiva, Universidade Federal do Vale",
    venue="Revista de Saúde Pública Regional, v. 54, n. 3, 2020, p. 201-214",
    date="2020-08-31",
    font_size=12,
    leading=1.9,
    references_label="Referências",
    notes="SciELO-style one-column article, eight pages: a long Resumo in two paragraphs "
    "with Descritores, then an English Abstract with Keywords; appendix tables on the last "
    "pages.",
    abstracts=(
        Abstract("pt", "Resumo", text("""
            O tempo de espera por atendimento é uma das principais queixas dos usuários da
            atenção primária, mas raramente é medido de forma sistemática. Este estudo
            analisou os registros eletrônicos de 28 unidades básicas de saúde de um município
            de médio porte entre 2016 e 2019, totalizando 1,3 milhão de atendimentos. O tempo
            de espera foi definido como o intervalo entre a chegada do usuário à recepção e o
            início da consulta, ambos registrados pelo sistema. Foram estimados modelos
            multinível com a unidade e o mês como níveis de agrupamento.

            A mediana do tempo de espera foi de 47 minutos, com grande variação entre as
            unidades, de 18 a 96 minutos. As esperas foram mais longas nas segundas-feiras,
            no período da manhã e nas unidades com menor número de médicos por habitante. A
            implantação do acolhimento com classificação de risco esteve associada a uma
            redução de 21% no tempo de espera dos casos agudos, sem aumento para os demais.
            Os registros eletrônicos permitem acompanhar esse indicador de forma contínua e a
            baixo custo, desde que os horários de chegada sejam anotados com cuidado.
            """), keywords="Descritores: Atenção Primária à Saúde; Tempo de Espera; "
            "Registros Eletrônicos de Saúde"),
        Abstract("en", "Abstract", text("""
            Waiting time is one of the main complaints of primary care users, but it is
            rarely measured systematically. We analysed the electronic records of 28 primary
            care units in a medium-sized municipality from 2016 to 2019, covering 1.3 million
            visits. The median waiting time was 47 minutes, ranging from 18 to 96 minutes
            across units. Waits were longer on Mondays, in the morning and in units with
            fewer physicians per inhabitant. Risk-based triage at reception was associated
            with a 21% reduction in waiting time for acute cases.
            """), keywords="Keywords: Primary Health Care; Waiting Time; Electronic Health "
            "Records"),
    ),
    body=body("""
        # INTRODUÇÃO

        A atenção primária é a principal porta de entrada do sistema de saúde e deve
        oferecer acesso oportuno aos usuários. O tempo de espera pelo atendimento, tanto
        para agendar uma consulta quanto na própria unidade no dia do atendimento, afeta a
        satisfação dos usuários e pode levar à procura de serviços de urgência para
        problemas que poderiam ser resolvidos na atenção básica.

        Estudos sobre o tema costumam basear-se em entrevistas ou em observação direta
        durante alguns dias, o que limita a comparação entre unidades e ao longo do tempo.
        Com a informatização das unidades, os horários de chegada e de atendimento passaram
        a ser registrados rotineiramente, o que abre a possibilidade de um acompanhamento
        contínuo.

        O objetivo deste estudo foi descrever o tempo de espera nas unidades básicas de um
        município, identificar fatores associados à sua variação e avaliar o efeito da
        implantação do acolhimento com classificação de risco.

        # MÉTODOS

        Trata-se de estudo transversal com dados secundários. O município possui cerca de
        310 mil habitantes e 28 unidades básicas, todas com prontuário eletrônico desde
        2015. Foram incluídos os atendimentos médicos e de enfermagem realizados entre
        janeiro de 2016 e dezembro de 2019.

        O horário de chegada é registrado pela recepção no momento em que o usuário se
        apresenta, e o início do atendimento é registrado automaticamente quando o
        profissional abre o prontuário. Foram excluídos os registros com intervalo negativo
        ou superior a oito horas, que correspondem a erros de digitação ou a atendimentos
        registrados posteriormente.

        !tab Tabela 1. Características das unidades básicas de saúde incluídas. |
        Característica | Mediana | Mínimo | Máximo :: População adscrita (mil) ; Médicos ;
        Enfermeiros ; Atendimentos por dia ; Salas de consulta

        As variáveis explicativas foram o dia da semana, o turno, o mês, o tipo de
        atendimento, a idade e o sexo do usuário, e, no nível da unidade, o número de
        médicos por mil habitantes e a presença de acolhimento com classificação de risco.
        Os modelos multinível consideraram o logaritmo do tempo de espera como desfecho.

        # RESULTADOS

        Após as exclusões, que somaram 3,8% dos registros, foram analisados 1.296.412
        atendimentos. A mediana do tempo de espera foi de 47 minutos, e um quarto dos
        usuários esperou mais de 85 minutos. A variação entre unidades foi grande, com
        medianas de 18 a 96 minutos.

        !fig Figura 1. Mediana do tempo de espera por unidade básica de saúde, 2016 a 2019.

        O tempo de espera foi maior nas segundas-feiras e diminuiu ao longo da semana. No
        turno da manhã, as esperas foram em média 35% mais longas do que à tarde, o que
        reflete a concentração da demanda espontânea nas primeiras horas de funcionamento.

        !fig Figura 2. Tempo de espera segundo o dia da semana e o turno.

        As unidades com mais médicos por habitante apresentaram esperas mais curtas. A
        idade do usuário teve pouca influência, enquanto os atendimentos de enfermagem
        tiveram esperas menores que os atendimentos médicos.

        !tab Tabela 2. Razões de tempo de espera estimadas pelo modelo multinível. |
        Variável | Razão | IC 95% inf. | IC 95% sup. :: Segunda-feira ; Turno da manhã ;
        Atendimento médico ; Médicos por mil habitantes ; Acolhimento com classificação

        Em 11 unidades, o acolhimento com classificação de risco foi implantado durante o
        período estudado. Nessas unidades, o tempo de espera dos casos agudos diminuiu 21%
        após a implantação, enquanto o dos demais atendimentos permaneceu estável.

        !fig Figura 3. Tempo de espera dos casos agudos antes e depois da implantação do
        acolhimento.

        # DISCUSSÃO

        Os resultados mostram que o tempo de espera varia mais entre unidades do que entre
        dias ou turnos, o que sugere que a organização do trabalho em cada unidade tem papel
        importante. A associação com o número de médicos por habitante era esperada, mas
        explica apenas parte das diferenças.

        O acolhimento com classificação de risco reduziu a espera dos casos agudos sem
        prejudicar os demais, o que contraria o receio de que a priorização apenas
        redistribua a espera. Uma explicação possível é que a escuta inicial resolva parte
        das demandas sem necessidade de consulta.

        Os registros eletrônicos têm limitações. O horário de chegada depende da anotação
        pela recepção, que pode atrasar em momentos de grande movimento, e os usuários que
        desistiram antes do atendimento não puderam ser identificados. Esses dois fatores
        levariam a subestimar o tempo de espera.

        # CONCLUSÃO

        O tempo de espera pode ser acompanhado de forma contínua a partir dos registros
        eletrônicos já existentes. Recomenda-se que os municípios incluam esse indicador
        no monitoramento da atenção primária e que as unidades com esperas mais longas
        recebam apoio para reorganizar o acolhimento.

        !newpage

        # APÊNDICE

        !tab Tabela A1. Mediana do tempo de espera (minutos) por ano e região do município. |
        Região | 2016 | 2018 | 2019 :: Centro ; Norte ; Sul ; Leste ; Oeste ; Zona rural

        !tab Tabela A2. Proporção de registros excluídos por motivo (%). | Motivo | 2016 |
        2018 | 2019 :: Intervalo negativo ; Intervalo acima de oito horas ; Horário ausente ;
        Registro duplicado

        !tab Tabela A3. Tempo de espera por faixa etária (minutos). | Faixa etária | Mediana
        | Percentil 25 | Percentil 75 :: 0 a 11 anos ; 12 a 19 anos ; 20 a 39 anos ; 40 a 59
        anos ; 60 anos ou mais

        !newpage

        !fig Figura A1. Distribuição mensal dos atendimentos no período estudado.

        !newpage

        !fig Figura A2. Tempo de espera por hora de chegada à recepção.
        """),
    references=refs("""
        1. Almeida CS, Fonseca RP. Acesso e tempo de espera na atenção básica. Rev Saude
        Coletiva Sul. 2015;12(2):88-97.

        2. Souza LM, Pinto AR, Lima GF. Acolhimento com classificação de risco em unidades
        básicas. Cad Atencao Primaria. 2017;5:41-50.

        3. Carvalho T. Uso de registros eletrônicos para indicadores de acesso. Inf Saude.
        2018;9(1):12-20.
        """),
)

AVES = Doc(
    id="pt_scanned_aves",
    language="pt",
    kind="scanned",
    title="Levantamento de aves em fragmentos urbanos de Mata Atlântica",
    authors="Beatriz Moura e Paulo Henrique Lins",
    affiliation="Departamento de Zoologia, Universidade Estadual do Litoral",
    venue="Boletim de Ornitologia Urbana, v. 3, 2015",
    date="2015-12",
    font_size=12,
    leading=1.7,
    references_label="Referências",
    notes="Image-only: two generated pages rendered at 100 dpi in grayscale and wrapped as "
    "JPEG images in a PDF without any text layer.",
    abstracts=(
        Abstract("pt", "Resumo", text("""
            Realizamos um levantamento de aves em quatro fragmentos de Mata Atlântica
            inseridos em área urbana, com pontos de escuta mensais durante um ano. Foram
            registradas 94 espécies, das quais 12 dependentes de floresta. A riqueza foi
            maior nos fragmentos ligados a outras áreas verdes por corredores arborizados.
            """)),
    ),
    body=body("""
        # Introdução

        Os fragmentos florestais urbanos abrigam parte da fauna original da Mata Atlântica,
        mas seu isolamento e seu pequeno tamanho limitam a permanência de espécies mais
        exigentes. Conhecer as aves desses fragmentos ajuda a definir prioridades de
        conservação na cidade.

        # Métodos

        Em cada fragmento foram distribuídos cinco pontos de escuta, visitados uma vez por
        mês ao amanhecer, durante dez minutos. Todas as aves vistas ou ouvidas foram
        anotadas.

        !fig Figura 1. Número acumulado de espécies por visita nos quatro fragmentos.

        # Resultados e discussão

        As 94 espécies registradas incluem 12 dependentes de floresta, encontradas apenas
        nos dois fragmentos ligados a outras áreas verdes. A conectividade parece mais
        importante do que o tamanho do fragmento.
        """),
    references=refs("""
        Lins PH. Aves de áreas verdes urbanas. Editora do Litoral; 2012.
        """),
)

WIFI = Doc(
    id="ko_kci_wifi_parks",
    language="ko",
    kind="article",
    title="공공 와이파이 접속 기록을 활용한 도시 공원 이용 패턴 분석",
    authors="김서연, 박준호, 이민지",
    affiliation="한빛대학교 도시공학과",
    venue="한국도시계획학회지 제60권 제1호, 2025, pp. 33-45",
    date="2025-02-15",
    font_size=10.5,
    leading=1.75,
    references_label="참고문헌",
    notes="Korean one-column article (KoreaScience style) set in an embedded Noto Sans CJK KR "
    "subset: Korean abstract (요약) with keywords, then an English Abstract.",
    abstracts=(
        Abstract("ko", "요약", text("""
            도시 공원의 이용 실태는 주로 현장 조사나 설문을 통해 파악되어 왔으나, 이러한
            방법은 비용이 많이 들고 조사 시점이 제한적이다. 본 연구는 공원에 설치된 공공
            와이파이의 익명화된 접속 기록을 이용하여 시간대별, 요일별 이용 패턴을
            분석하였다. 2023년 한 해 동안 서울시 15개 공원의 접속 기록 약 420만 건을
            분석한 결과, 평일에는 점심시간과 저녁 시간에 이용이 집중되었고 주말에는 오후
            시간대 전반에 고르게 분포하였다. 현장 계수 조사와 비교한 결과 접속 기록은
            방문자 수의 변화를 잘 반영하였으며, 상관계수는 0.87로 나타났다. 공공 와이파이
            기록은 공원 관리와 시설 계획을 위한 저비용 자료로 활용될 수 있다.
            """), keywords="주제어: 도시 공원, 공공 와이파이, 이용 패턴, 빅데이터"),
        Abstract("en", "Abstract", text("""
            Park use has mostly been studied through field counts and surveys, which are
            costly and limited in time. This study analyses anonymised connection logs of
            public Wi-Fi installed in 15 parks in Seoul during 2023, about 4.2 million
            records. On weekdays, use peaked at lunchtime and in the evening, while on
            weekends it was spread over the afternoon. Connection counts followed field
            counts closely, with a correlation of 0.87.
            """), keywords="Keywords: urban park, public Wi-Fi, usage pattern, big data"),
    ),
    body=body("""
        # 1. 서론

        도시 공원은 시민의 여가와 건강을 위한 중요한 공간이다. 공원을 효과적으로
        관리하고 새로운 시설을 계획하기 위해서는 언제, 얼마나 많은 사람이 공원을
        이용하는지에 대한 정보가 필요하다. 그러나 기존의 현장 계수 조사는 특정 날짜와
        시간에 한정되어 계절이나 요일에 따른 변화를 충분히 반영하기 어렵다.

        최근 많은 지방자치단체가 공원에 공공 와이파이를 설치하면서, 접속 기록이라는 새로운
        자료가 축적되고 있다. 접속 기록에는 기기 식별자를 암호화한 값과 접속 시각이
        포함되어 있어, 개인을 식별하지 않고도 방문 규모와 체류 시간을 추정할 수 있다.

        # 2. 연구 방법

        연구 대상은 서울시에 위치한 15개 근린공원 및 도시자연공원이다. 2023년 1월부터
        12월까지의 접속 기록을 시간 단위로 집계하였으며, 같은 기기가 10분 이내에 다시
        접속한 경우는 하나의 방문으로 간주하였다. 공원 직원이나 인근 상가의 고정 기기로
        추정되는 기록은 제외하였다.

        !tab 표 1. 연구 대상 공원의 특성. | 공원 유형 | 공원 수 | 평균 면적 (ha) | 접속 기록 (만 건)
        :: 근린공원 ; 도시자연공원 ; 수변공원

        접속 기록의 타당성을 검증하기 위해 계절별로 이틀씩, 총 8일 동안 주요 출입구에서
        현장 계수 조사를 병행하였다. 두 자료의 시간대별 값을 비교하여 상관계수를
        산출하였다.

        # 3. 분석 결과

        평일의 이용은 오전 산책 시간, 점심시간, 그리고 퇴근 이후의 저녁 시간에 뚜렷한
        정점을 보였다. 주말에는 오전 10시 이후 이용이 꾸준히 증가하여 오후 내내 높은
        수준을 유지하였다. 계절별로는 봄과 가을의 이용이 가장 많았고, 여름에는 저녁
        시간대의 비중이 커졌다.

        !fig 그림 1. 평일과 주말의 시간대별 평균 접속 수.

        현장 계수 결과와 접속 기록의 상관계수는 0.87로 높게 나타났다. 다만 어린이와
        노년층의 비율이 높은 공원에서는 접속 기록이 방문자 수를 과소 추정하는 경향이
        있었다. 이는 스마트폰 보유율과 와이파이 사용 습관의 차이에 따른 것으로 보인다.

        !fig 그림 2. 현장 계수 조사와 접속 기록의 비교.

        # 4. 결론

        공공 와이파이 접속 기록은 공원 이용의 시간적 변화를 연중 지속적으로 파악할 수
        있는 유용한 자료이다. 특히 조명, 화장실, 매점과 같은 시설의 운영 시간을 이용
        패턴에 맞게 조정하는 데 활용할 수 있다. 다만 연령대에 따른 편향을 보정하기
        위해 주기적인 현장 조사를 함께 수행할 필요가 있다. 향후 연구에서는 기상 자료와
        행사 정보를 결합하여 이용 변화의 원인을 분석하고자 한다.
        """),
    references=refs("""
        [1] 정하늘, 최유진 (2019). 도시 공원 이용 행태 조사 방법의 비교. 국토연구, 28(2),
        55-70.

        [2] 윤상우 (2021). 공공 데이터를 활용한 도시 공간 분석. 도시정보학회지, 14, 101-118.

        [3] H. Park and S. Lee (2022). Counting visitors with network logs. Journal of Urban
        Analytics, 6(1), 12-27.
        """),
)

DOCS = [ESPERA, AVES, WIFI]
